package storagetest

import (
	"context"
	"errors"

	"github.com/databrew/databrew-stage/publish"
)

func doneContextIsHonoured(f *fixture) {
	// What the calls below could touch, made with a live context.
	staged := f.stage("run/staged", []byte("staged"))
	f.put("run/object", []byte("object"))

	ctx, cancel := context.WithCancel(f.ctx())
	cancel()
	canceled := func(what string, err error) {
		f.t.Helper()
		if !errors.Is(err, context.Canceled) {
			f.t.Errorf("%s with a cancelled context = %v; want an error wrapping context.Canceled", what, err)
		}
	}
	w, err := f.s.StagePart(ctx, "run/new")
	if err == nil {
		// A backend may start the part lazily; it must then fail at Finish.
		_, err = w.Finish()
		_ = w.Abort()
	}
	canceled("StagePart", err)
	canceled("CompletePart", f.s.CompletePart(ctx, staged))
	canceled("CompleteFolder", f.s.CompleteFolder(ctx, "run/", []publish.Part{staged}))
	canceled("CheckPart", f.s.CheckPart(ctx, staged))
	_, err = f.s.ListStaged(ctx, "")
	canceled("ListStaged", err)
	_, err = f.s.AbortStaged(ctx, "", anyPart)
	canceled("AbortStaged", err)
	_, err = f.s.PutIfAbsent(ctx, "run/created", []byte("x"))
	canceled("PutIfAbsent", err)
	canceled("Put", f.s.Put(ctx, "run/object", []byte("replaced")))
	_, err = f.s.Read(ctx, "run/object")
	canceled("Read", err)
	_, _, err = f.s.Stat(ctx, "run/object")
	canceled("Stat", err)
	_, err = f.s.List(ctx, "")
	canceled("List", err)
	_, err = f.s.DeletePrefix(ctx, "run/")
	canceled("DeletePrefix", err)
	if f.t.Failed() {
		return
	}
	// Nothing changed.
	f.expectObject("run/object", []byte("object"))
	f.expectNoObject("run/created")
	f.expectNoObject("run/new")
	if f.caps.HidesParts {
		f.expectStaged("", "run/staged")
		f.expectList("", "run/object")
	}
	f.complete(staged)
	f.expectObject("run/staged", []byte("staged"))
}

func contextEndedWhileWriting(f *fixture) {
	key := "run/part-00000.parquet"
	data := payload(10<<20, 10)
	ctx, cancel := context.WithCancel(f.ctx())
	w, err := f.s.StagePart(ctx, key)
	if err != nil {
		f.t.Fatal(err)
	}
	var werr error
	if _, werr = w.Write(data[:1<<20]); werr != nil {
		f.t.Fatalf("Write before the cancellation: %v", werr)
	}
	cancel()
	for rest := data[1<<20:]; len(rest) > 0 && werr == nil; {
		n := min(len(rest), 1<<20)
		_, werr = w.Write(rest[:n])
		rest = rest[n:]
	}
	var p publish.Part
	if werr == nil {
		p, werr = w.Finish()
	}
	if !errors.Is(werr, context.Canceled) {
		f.t.Fatalf("writing a part after its context was cancelled = %v; want an error wrapping context.Canceled", werr)
	}
	if p != (publish.Part{}) {
		f.t.Fatalf("Finish failed and gave a part: %+v", p)
	}
	if err := w.Abort(); err != nil {
		f.t.Fatalf("Abort after the cancellation: %v", err)
	}
	f.expectStaged("")
	f.expectNoObject(key)
}
