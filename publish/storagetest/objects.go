package storagetest

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"sync/atomic"

	"github.com/databrew/databrew-stage/publish"
)

func capsAreConsistent(f *fixture) {
	if f.caps.CompletesAtOnce && !f.caps.HidesParts {
		f.t.Fatalf("Caps = %+v: a backend whose finished parts are objects cannot complete them at once", f.caps)
	}
	if f.s.Caps() != f.caps {
		f.t.Fatalf("Caps changed: %+v, then %+v", f.caps, f.s.Caps())
	}
}

func putIfAbsentCreatesOnce(f *fixture) {
	key := "dt=2024-05-01/run=R/_SUCCESS"
	if !f.putIfAbsent(key, []byte("first")) {
		f.t.Fatal("PutIfAbsent on an empty root did not create the object")
	}
	if f.putIfAbsent(key, []byte("second")) {
		f.t.Fatal("a second PutIfAbsent created the object again")
	}
	f.expectObject(key, []byte("first"))
	// An object Put wrote counts as well.
	f.put("_verdict.json", []byte("put"))
	if f.putIfAbsent("_verdict.json", []byte("create")) {
		f.t.Fatal("PutIfAbsent over an object Put wrote created it")
	}
	f.expectObject("_verdict.json", []byte("put"))
}

func putIfAbsentConcurrently(f *fixture) {
	const writers, rounds = 8, 10
	for round := range rounds {
		key := fmt.Sprintf(".databrew-shards/run=R%d/_decision.json", round)
		var created atomic.Int32
		winner := make(chan []byte, writers)
		errs := make(chan error, writers)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range writers {
			wg.Go(func() {
				data := fmt.Appendf(nil, "decided by writer %d", i)
				<-start
				ok, err := f.s.PutIfAbsent(f.ctx(), key, data)
				if err != nil {
					errs <- err
					return
				}
				if ok {
					created.Add(1)
					winner <- data
				}
			})
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			f.t.Fatalf("PutIfAbsent: %v", err)
		}
		if n := created.Load(); n != 1 {
			f.t.Fatalf("%d of %d concurrent PutIfAbsent created %s; want exactly 1", n, writers, key)
		}
		f.expectObject(key, <-winner)
	}
}

func putReplaces(f *fixture) {
	key := "_verdict.json"
	f.put(key, payload(1000, 1))
	f.put(key, []byte("shorter"))
	f.expectObject(key, []byte("shorter"))
	if !f.putIfAbsent("run/_manifest.json", []byte("created")) {
		f.t.Fatal("PutIfAbsent did not create")
	}
	f.put("run/_manifest.json", []byte("replaced"))
	f.expectObject("run/_manifest.json", []byte("replaced"))
	f.expectList("", "_verdict.json", "run/_manifest.json")
}

func putIsAtomicForReaders(f *fixture) {
	key := "_verdict.json"
	a, b := payload(256<<10, 2), payload(200<<10, 3)
	f.put(key, a)
	done := make(chan struct{})
	var reads atomic.Int32
	readerErr := make(chan error, 1)
	go func() {
		defer close(readerErr)
		for {
			select {
			case <-done:
				return
			default:
			}
			got, err := f.s.Read(f.ctx(), key)
			if err != nil {
				readerErr <- fmt.Errorf("a Read while Put replaces: %w", err)
				return
			}
			if !bytes.Equal(got, a) && !bytes.Equal(got, b) {
				readerErr <- fmt.Errorf("a Read while Put replaces gave %d bytes, neither the old object nor the new one", len(got))
				return
			}
			reads.Add(1)
		}
	}()
	for range 10 {
		f.put(key, b)
		f.put(key, a)
	}
	close(done)
	if err := <-readerErr; err != nil {
		f.t.Fatal(err)
	}
	f.t.Logf("%d reads during 20 replacements", reads.Load())
}

func readOfAbsent(f *fixture) {
	f.expectNoObject("nothing/here")
	f.put("gone/soon", []byte("x"))
	if n, err := f.s.DeletePrefix(f.ctx(), "gone/"); err != nil || n != 1 {
		f.t.Fatalf("DeletePrefix = %d, %v; want 1", n, err)
	}
	f.expectNoObject("gone/soon")
	// A key under an object is no object either.
	f.put("file", []byte("x"))
	if _, err := f.s.Read(f.ctx(), "file/under"); err == nil {
		f.t.Fatal("Read of a key under an object succeeded")
	}
}

func statGivesTheSize(f *fixture) {
	f.put("three", []byte("abc"))
	f.put("none", nil)
	for key, want := range map[string]int64{"three": 3, "none": 0} {
		size, exists, err := f.s.Stat(f.ctx(), key)
		if err != nil || !exists || size != want {
			f.t.Fatalf("Stat(%q) = %d, %v, %v; want %d bytes", key, size, exists, err, want)
		}
	}
}

func listInKeyOrder(f *fixture) {
	// Written out of order; "+" and "-" sort before "/", and "B" before
	// "a".
	for _, k := range []string{"ab", "a/c/d", "B", "a+", "a/b0", "b/a", "a-b", "a/b"} {
		f.put(k, []byte(k))
	}
	f.expectList("", "B", "a+", "a-b", "a/b", "a/b0", "a/c/d", "ab", "b/a")
	f.expectList("a/", "a/b", "a/b0", "a/c/d")
	f.expectList("a", "a+", "a-b", "a/b", "a/b0", "a/c/d", "ab")
	f.expectList("a/b", "a/b", "a/b0")
	f.expectList("a/c/", "a/c/d")
	f.expectList("a/b0", "a/b0")
	f.expectList("b/", "b/a")
	f.expectList("c")
	f.expectList("a/c/d/")
}

func deletePrefixCounts(f *fixture) {
	for _, k := range []string{"d/1", "d/2", "d/e/3", "d+", "dx", "e/d/1"} {
		f.put(k, []byte(k))
	}
	del := func(prefix string, want int) {
		f.t.Helper()
		n, err := f.s.DeletePrefix(f.ctx(), prefix)
		if err != nil || n != want {
			f.t.Fatalf("DeletePrefix(%q) = %d, %v; want %d", prefix, n, err, want)
		}
	}
	del("d/", 3)
	f.expectList("", "d+", "dx", "e/d/1")
	del("zzz/", 0)
	del("d", 2)
	f.expectList("", "e/d/1")
	if n, err := f.s.DeletePrefix(f.ctx(), ""); !errors.Is(err, publish.ErrBadKey) || n != 0 {
		f.t.Fatalf("DeletePrefix of the whole root = %d, %v; want it refused with ErrBadKey", n, err)
	}
	f.expectList("", "e/d/1")
	del("e/d/1", 1)
	f.expectList("")
	// What is deleted can be written again.
	f.put("d/1", []byte("again"))
	f.expectObject("d/1", []byte("again"))
	if _, err := f.s.Read(f.ctx(), "d/2"); !errors.Is(err, fs.ErrNotExist) {
		f.t.Fatalf("Read of a deleted key = %v; want fs.ErrNotExist", err)
	}
}

func whereNamesTheKey(f *fixture) {
	key := "dt=2024-05-01/run=R/part-00000.parquet"
	if w := f.s.Where(key); !bytes.Contains([]byte(w), []byte(key)) {
		f.t.Fatalf("Where(%q) = %q; want it to name the key", key, w)
	}
}
