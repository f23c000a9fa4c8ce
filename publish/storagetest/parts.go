package storagetest

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"

	"github.com/databrew/databrew-stage/publish"
)

func stagePartRefusesATakenKey(f *fixture) {
	key := "run/part-00000.parquet"
	f.put(key, []byte("theirs"))
	if _, err := f.s.StagePart(f.ctx(), key); !errors.Is(err, fs.ErrExist) {
		f.t.Fatalf("StagePart over an object = %v; want an error wrapping fs.ErrExist", err)
	}
	f.expectObject(key, []byte("theirs"))
	f.expectStaged("")
}

func stagedPartVisibility(f *fixture) {
	key := "dt=2024-05-01/run=R/part-00000.parquet"
	data := payload(3<<20, 4)
	w := f.open(key, data[:1<<20])
	if f.caps.HidesParts {
		f.expectNoObject(key)
		f.expectList("")
		f.expectStaged("", key)
	}
	f.writeAll(w, data[1<<20:])
	p := f.finish(w, key, data)
	if f.caps.HidesParts {
		f.expectNoObject(key)
		f.expectList("")
		st := f.listStaged("")
		if len(st) != 1 || st[0].Key != key || st[0].Token != p.Token {
			f.t.Fatalf("ListStaged = %+v; want the part %q with token %q", st, key, p.Token)
		}
	} else {
		f.expectObject(key, data)
		f.expectStaged("")
	}
	f.complete(p)
	f.expectObject(key, data)
	f.expectList("", key)
	f.expectStaged("")
}

func completePartIsIdempotent(f *fixture) {
	key := "run/part-00000.parquet"
	data := payload(1000, 5)
	p := f.stage(key, data)
	f.complete(p)
	f.complete(p) // a crash after the completion, before its record
	f.expectObject(key, data)
	if err := f.s.CompleteFolder(f.ctx(), "run/", []publish.Part{p}); err != nil {
		f.t.Fatalf("CompleteFolder of a completed part: %v", err)
	}
	f.expectObject(key, data)
	f.expectList("", key)
}

func completePartIsCreateOnly(f *fixture) {
	key := "run/part-00000.parquet"
	if f.caps.HidesParts {
		// Another writer takes the key while the part is staged.
		p := f.stage(key, []byte("ours"))
		f.put(key, []byte("theirs"))
		f.expectErr("CompletePart over another object", f.s.CompletePart(f.ctx(), p), fs.ErrExist)
	} else {
		// Another writer takes the key while the part is being written.
		w := f.open(key, []byte("ours"))
		f.put(key, []byte("theirs"))
		_, err := w.Finish()
		f.expectErr("Finish over another object", err, fs.ErrExist)
		_ = w.Abort()
	}
	f.expectObject(key, []byte("theirs"))

	// A completed part of another size holds the key.
	other := "run/part-00001.parquet"
	p := f.stage(other, []byte("12345"))
	f.complete(p)
	p.Size++
	f.expectErr("CompletePart of another size over a completed part", f.s.CompletePart(f.ctx(), p), fs.ErrExist)
	f.expectObject(other, []byte("12345"))
}

func completeGonePart(f *fixture) {
	data := []byte("gone")
	if f.caps.HidesParts {
		p := f.stage("a/part", data)
		if n := f.abortStaged("a/", anyPart); n != 1 {
			f.t.Fatalf("AbortStaged = %d; want 1", n)
		}
		f.expectErr("CompletePart of an aborted part", f.s.CompletePart(f.ctx(), p), fs.ErrNotExist)
		f.expectNoObject("a/part")
	}
	w := f.open("b/part", data)
	p := f.finish(w, "b/part", data)
	if err := w.Abort(); err != nil {
		f.t.Fatalf("Abort after Finish: %v", err)
	}
	f.expectErr("CompletePart of a part its writer aborted", f.s.CompletePart(f.ctx(), p), fs.ErrNotExist)
	f.expectNoObject("b/part")
	f.expectList("")
}

func twoStagingsOfAKey(f *fixture) {
	key := "run/shard=0-of-2/part-00000.parquet"
	first, second := []byte("first"), []byte("the second")
	if !f.caps.HidesParts {
		// The parts are objects once finished: the first finished wins.
		w1, w2 := f.open(key, first), f.open(key, second)
		p := f.finish(w1, key, first)
		_, err := w2.Finish()
		f.expectErr("Finish of a second part at a key", err, fs.ErrExist)
		_ = w2.Abort()
		f.complete(p)
		f.expectObject(key, first)
		return
	}
	p1, p2 := f.stage(key, first), f.stage(key, second)
	if p1.Token == p2.Token {
		f.t.Fatalf("two stagings of %q have one token %q", key, p1.Token)
	}
	if st := f.listStaged(key); len(st) != 2 {
		f.t.Fatalf("ListStaged(%q) = %+v; want both stagings", key, st)
	}
	f.complete(p1)
	f.expectErr("CompletePart of the second staging", f.s.CompletePart(f.ctx(), p2), fs.ErrExist)
	f.expectObject(key, first)
	// The second is gone or still staged; either way AbortStaged ends it.
	f.abortStaged(key, func(s publish.Staged) bool { return s.Token == p2.Token })
	f.expectStaged("")
	f.expectObject(key, first)
}

func checkPartFollowsThePart(f *fixture) {
	key := "run/part-00000.parquet"
	data := payload(4096, 6)
	p := f.stage(key, data)
	check := func(what string, p publish.Part) error {
		f.t.Helper()
		return f.s.CheckPart(f.ctx(), p)
	}
	if err := check("staged", p); err != nil {
		f.t.Fatalf("CheckPart of a staged part: %v", err)
	}
	wrong := p
	wrong.Size--
	if err := check("wrong size", wrong); err == nil {
		f.t.Fatal("CheckPart with another size = nil; want an error")
	}
	f.complete(p)
	if err := check("completed", p); err != nil {
		f.t.Fatalf("CheckPart of a completed part: %v", err)
	}
	if err := check("completed, wrong size", wrong); err == nil {
		f.t.Fatal("CheckPart of a completed part with another size = nil; want an error")
	}
	if _, err := f.s.DeletePrefix(f.ctx(), key); err != nil {
		f.t.Fatal(err)
	}
	f.expectErr("CheckPart of a deleted part", check("deleted", p), fs.ErrNotExist)
	if f.caps.HidesParts {
		q := f.stage("run/part-00001.parquet", data)
		f.abortStaged("run/", anyPart)
		f.expectErr("CheckPart of an aborted part", check("aborted", q), fs.ErrNotExist)
	}
}

func listStaged(f *fixture) {
	open := f.open("r/d", []byte("open"))
	defer func() { _ = open.Abort() }()
	parts := map[string]publish.Part{}
	for _, k := range []string{"r/b", "rx/c", "r/a", "q/e/f"} {
		parts[k] = f.stage(k, []byte(k))
	}
	if !f.caps.HidesParts {
		f.expectStaged("")
		return
	}
	f.expectStaged("", "q/e/f", "r/a", "r/b", "r/d", "rx/c")
	f.expectStaged("r/", "r/a", "r/b", "r/d")
	f.expectStaged("r", "r/a", "r/b", "r/d", "rx/c")
	f.expectStaged("q/e/", "q/e/f")
	f.expectStaged("r/a", "r/a")
	f.expectStaged("s/")
	for _, s := range f.listStaged("") {
		if p, ok := parts[s.Key]; ok && s.Token != p.Token {
			f.t.Fatalf("ListStaged gives %q the token %q; Finish gave %q", s.Key, s.Token, p.Token)
		}
	}
	f.expectList("")
}

func abortStagedOnlyOwn(f *fixture) {
	open := f.open("r/d", []byte("open"))
	parts := map[string]publish.Part{}
	for _, k := range []string{"r/a", "r/b", "rx/c"} {
		parts[k] = f.stage(k, []byte(k))
	}
	if !f.caps.HidesParts {
		if n := f.abortStaged("", anyPart); n != 0 {
			f.t.Fatalf("AbortStaged = %d on a backend whose parts are objects; want 0", n)
		}
		_ = open.Abort()
		f.expectList("", "r/a", "r/b", "rx/c")
		return
	}
	if n := f.abortStaged("r/", func(s publish.Staged) bool { return s.Key == "r/b" }); n != 1 {
		f.t.Fatalf("AbortStaged of the one part own accepts = %d; want 1", n)
	}
	f.expectStaged("", "r/a", "r/d", "rx/c")
	if n := f.abortStaged("r/", anyPart); n != 2 {
		f.t.Fatalf("AbortStaged(%q) = %d; want 2 (r/a, r/d), and not rx/c", "r/", n)
	}
	f.expectStaged("", "rx/c")
	if n := f.abortStaged("r/", anyPart); n != 0 {
		f.t.Fatalf("AbortStaged of nothing = %d; want 0", n)
	}
	// The aborted parts cannot be completed; the other one can.
	f.expectErr("CompletePart of an aborted part", f.s.CompletePart(f.ctx(), parts["r/b"]), fs.ErrNotExist)
	f.writeAll(open, []byte("more"))
	if p, err := open.Finish(); err == nil {
		f.expectErr("CompletePart of a part aborted while open", f.s.CompletePart(f.ctx(), p), fs.ErrNotExist)
	}
	_ = open.Abort()
	f.complete(parts["rx/c"])
	f.expectList("", "rx/c")
}

func writerAbortUndoes(f *fixture) {
	w := f.open("run/open", []byte("open"))
	if err := w.Abort(); err != nil {
		f.t.Fatalf("Abort of an open part: %v", err)
	}
	if err := w.Abort(); err != nil {
		f.t.Fatalf("a second Abort: %v", err)
	}
	if _, err := w.Finish(); err == nil {
		f.t.Fatal("Finish after Abort = nil; want an error")
	}
	w2 := f.open("run/finished", []byte("finished"))
	p := f.finish(w2, "run/finished", []byte("finished"))
	if err := w2.Abort(); err != nil {
		f.t.Fatalf("Abort of a finished part: %v", err)
	}
	f.expectStaged("")
	f.expectList("")
	f.expectErr("CheckPart of an aborted part", f.s.CheckPart(f.ctx(), p), fs.ErrNotExist)
	// The key is free again.
	f.complete(f.stage("run/finished", []byte("again")))
	f.expectObject("run/finished", []byte("again"))
}

func deletePrefixLeavesStagedParts(f *fixture) {
	if !f.caps.HidesParts {
		f.t.Skip("a finished part is an object here")
	}
	p := f.stage("d/part", []byte("staged"))
	f.put("d/x", []byte("x"))
	if n, err := f.s.DeletePrefix(f.ctx(), "d/"); err != nil || n != 1 {
		f.t.Fatalf("DeletePrefix = %d, %v; want 1", n, err)
	}
	f.expectStaged("d/", "d/part")
	f.complete(p)
	f.expectObject("d/part", []byte("staged"))
}

func completeFolder(f *fixture) {
	keys := []string{"f/run/part-00000.parquet", "f/run/shard=1-of-2/part-00000.parquet", "f/run/part-00001.parquet"}
	data := [][]byte{payload(3000, 7), payload(5000, 8), nil}
	var parts []publish.Part
	for i, k := range keys {
		parts = append(parts, f.stage(k, data[i]))
	}
	for _, bad := range []struct {
		folder string
		parts  []publish.Part
	}{{"f/run", parts}, {"", parts}, {"f/other/", parts}, {"../", parts}} {
		f.expectErr("CompleteFolder("+bad.folder+")", f.s.CompleteFolder(f.ctx(), bad.folder, bad.parts), publish.ErrBadKey)
	}
	if err := f.s.CompleteFolder(f.ctx(), "f/run/", nil); err == nil {
		f.t.Fatal("CompleteFolder of no parts = nil; want an error")
	}
	if err := f.s.CompleteFolder(f.ctx(), "f/run/", append(slices.Clone(parts), parts[0])); err == nil {
		f.t.Fatal("CompleteFolder of a part given twice = nil; want an error")
	}
	if f.caps.HidesParts {
		f.expectList("f/")
	}
	if err := f.s.CompleteFolder(f.ctx(), "f/run/", parts); err != nil {
		f.t.Fatalf("CompleteFolder: %v", err)
	}
	want := slices.Clone(keys)
	slices.Sort(want)
	f.expectList("", want...)
	for i, k := range keys {
		f.expectObject(k, data[i])
	}
	f.expectStaged("")
	if err := f.s.CompleteFolder(f.ctx(), "f/run/", parts); err != nil {
		f.t.Fatalf("CompleteFolder again: %v", err)
	}
	// What the protocol adds to a completed folder does not make it
	// another's.
	f.putIfAbsent("f/run/_SUCCESS", nil)
	if err := f.s.CompleteFolder(f.ctx(), "f/run/", parts); err != nil {
		f.t.Fatalf("CompleteFolder again after _SUCCESS: %v", err)
	}
	want = append(want, "f/run/_SUCCESS")
	slices.Sort(want)
	f.expectList("", want...)
}

func completeFolderAtOnce(f *fixture) {
	if !f.caps.CompletesAtOnce {
		f.t.Skip("the backend completes parts one by one")
	}
	// A folder that holds another object is another's.
	g := []publish.Part{f.stage("g/run/part-0", []byte("0")), f.stage("g/run/part-1", []byte("1"))}
	f.put("g/run/other", []byte("theirs"))
	f.expectErr("CompleteFolder into a folder holding another object", f.s.CompleteFolder(f.ctx(), "g/run/", g), fs.ErrExist)
	f.expectList("g/", "g/run/other")
	// A folder that holds one of the parts and not the others is too.
	f.complete(f.stage("k/run/part-0", []byte("0")))
	k := []publish.Part{f.stage("k/run/part-1", []byte("1"))}
	f.expectErr("CompleteFolder into a folder holding a part completed alone", f.s.CompleteFolder(f.ctx(), "k/run/", k), fs.ErrExist)
	f.expectList("k/", "k/run/part-0")
	// A part that is gone makes none visible.
	h0 := f.stage("h/run/part-0", []byte("0"))
	w := f.open("h/run/part-1", []byte("1"))
	h1 := f.finish(w, "h/run/part-1", []byte("1"))
	if err := w.Abort(); err != nil {
		f.t.Fatal(err)
	}
	f.expectErr("CompleteFolder with a part gone", f.s.CompleteFolder(f.ctx(), "h/run/", []publish.Part{h0, h1}), fs.ErrNotExist)
	f.expectList("h/")
	// The part left can still be completed, in a folder of its own.
	if err := f.s.CompleteFolder(f.ctx(), "h/run/", []publish.Part{h0}); err != nil {
		f.t.Fatalf("CompleteFolder of the part left: %v", err)
	}
	f.expectList("h/", "h/run/part-0")
}

func completeFolderReaders(f *fixture) {
	if !f.caps.CompletesAtOnce {
		f.t.Skip("the backend completes parts one by one")
	}
	const folders, perFolder = 10, 5
	parts := make([][]publish.Part, folders)
	for i := range folders {
		for j := range perFolder {
			key := "c/run=" + string(rune('a'+i)) + "/part-" + string(rune('0'+j))
			parts[i] = append(parts[i], f.stage(key, []byte(key)))
		}
	}
	done := make(chan struct{})
	readerErr := make(chan error, 1)
	go func() {
		defer close(readerErr)
		for {
			select {
			case <-done:
				return
			default:
			}
			keys, err := f.s.List(f.ctx(), "c/")
			if err != nil {
				readerErr <- err
				return
			}
			count := map[string]int{}
			for _, k := range keys {
				count[k[:len("c/run=a/")]]++
			}
			for folder, n := range count {
				if n != perFolder {
					readerErr <- fmt.Errorf("a reader listed %d of the %d parts of %s", n, perFolder, folder)
					return
				}
			}
		}
	}()
	for i := range folders {
		folder := "c/run=" + string(rune('a'+i)) + "/"
		if err := f.s.CompleteFolder(f.ctx(), folder, parts[i]); err != nil {
			close(done)
			f.t.Fatalf("CompleteFolder(%q): %v", folder, err)
		}
	}
	close(done)
	if err := <-readerErr; err != nil {
		f.t.Fatal(err)
	}
	if n := len(f.list("c/")); n != folders*perFolder {
		f.t.Fatalf("listed %d parts; want %d", n, folders*perFolder)
	}
}

func emptyPartsAndObjects(f *fixture) {
	key := "run/part-00000.parquet"
	w, err := f.s.StagePart(f.ctx(), key)
	if err != nil {
		f.t.Fatal(err)
	}
	p := f.finish(w, key, nil)
	f.complete(p)
	f.expectObject(key, []byte{})
	if !f.putIfAbsent("run/_SUCCESS", nil) {
		f.t.Fatal("PutIfAbsent of an empty _SUCCESS did not create it")
	}
	f.expectObject("run/_SUCCESS", []byte{})
	if f.putIfAbsent("run/_SUCCESS", nil) {
		f.t.Fatal("a second PutIfAbsent of _SUCCESS created it again")
	}
}

func bigPartRoundTrips(f *fixture) {
	key := "dt=2024-05-01/run=R/part-00000.parquet"
	data := payload(20<<20, 9)
	p := f.stage(key, data)
	f.complete(p)
	f.expectObject(key, data)
}
