package memstorage_test

import (
	"context"
	"errors"
	"io/fs"
	"slices"
	"testing"
	"time"

	"github.com/databrew/databrew-stage/publish"
	"github.com/databrew/databrew-stage/publish/memstorage"
	"github.com/databrew/databrew-stage/publish/storagetest"
)

func keys(t *testing.T, s *memstorage.Storage) []string {
	t.Helper()
	ks, err := s.List(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	return ks
}

func TestFailStrikesTheChosenCallsOnly(t *testing.T) {
	ctx := context.Background()
	s := memstorage.New(publish.Caps{HidesParts: true})
	in := s.Inject(memstorage.Fault{Op: memstorage.OpPut, Key: "b", Skip: 1, Count: 2, Err: publish.ErrNoAnswer})
	if err := s.Put(ctx, "a", []byte("a")); err != nil {
		t.Fatalf("Put of another key: %v", err)
	}
	if err := s.Put(ctx, "b", []byte("1")); err != nil {
		t.Fatalf("the skipped Put: %v", err)
	}
	for range 2 {
		err := s.Put(ctx, "b", []byte("2"))
		if !errors.Is(err, memstorage.ErrInjected) || !errors.Is(err, publish.ErrNoAnswer) {
			t.Fatalf("struck Put = %v; want ErrInjected and ErrNoAnswer", err)
		}
	}
	if got, _ := s.Read(ctx, "b"); string(got) != "1" {
		t.Fatalf("a failed Put wrote: %q", got)
	}
	if err := s.Put(ctx, "b", []byte("3")); err != nil {
		t.Fatalf("a Put after Count strikes: %v", err)
	}
	if in.Fired() != 2 {
		t.Fatalf("Fired = %d; want 2", in.Fired())
	}
	// A fault of every call, removed.
	every := s.Inject(memstorage.Fault{Op: memstorage.OpRead})
	for range 3 {
		if _, err := s.Read(ctx, "a"); !errors.Is(err, memstorage.ErrInjected) {
			t.Fatalf("Read = %v; want the fault", err)
		}
	}
	every.Remove()
	if got, err := s.Read(ctx, "a"); err != nil || string(got) != "a" {
		t.Fatalf("Read after Remove = %q, %v", got, err)
	}
	want := []memstorage.Call{{Op: memstorage.OpPut, Key: "a"}, {Op: memstorage.OpPut, Key: "b"}, {Op: memstorage.OpPut, Key: "b"}, {Op: memstorage.OpPut, Key: "b"}}
	if got := s.Calls(); !slices.Equal(got[:4], want) {
		t.Fatalf("Calls = %v; want them to start with %v", got, want)
	}
}

func TestFailOfAWriterCall(t *testing.T) {
	ctx := context.Background()
	s := memstorage.New(publish.Caps{HidesParts: true})
	s.Inject(memstorage.Fault{Op: memstorage.OpWrite, Key: "run/part", Skip: 1, Count: 1})
	w, err := s.StagePart(ctx, "run/part")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("ok")); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("struck")); !errors.Is(err, memstorage.ErrInjected) {
		t.Fatalf("second Write = %v; want the fault", err)
	}
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	if st, _ := s.ListStaged(ctx, ""); len(st) != 0 {
		t.Fatalf("staged after Abort: %v", st)
	}
}

func TestHangEndsWithTheContext(t *testing.T) {
	s := memstorage.New(publish.Caps{HidesParts: true, CompletesAtOnce: true})
	p := storagetest.Stage(t, s, "run/part", []byte("x"))
	s.Inject(memstorage.Fault{Op: memstorage.OpCompleteFolder, Mode: memstorage.Hang})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := s.CompleteFolder(ctx, "run/", []publish.Part{p})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("hung CompleteFolder = %v; want context.DeadlineExceeded", err)
	}
	if ctx.Err() == nil {
		t.Fatal("hung CompleteFolder returned before its context ended")
	}
	if ks := keys(t, s); len(ks) != 0 {
		t.Fatalf("a hung CompleteFolder completed: %q", ks)
	}

	// A writer's call hangs until the context StagePart was given ends;
	// Abort still runs after it.
	s.Inject(memstorage.Fault{Op: memstorage.OpFinish, Mode: memstorage.Hang})
	wctx, wcancel := context.WithCancel(context.Background())
	w, err := s.StagePart(wctx, "run/other")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() { _, err := w.Finish(); done <- err }()
	select {
	case err := <-done:
		t.Fatalf("hung Finish returned before its context ended: %v", err)
	case <-time.After(20 * time.Millisecond):
	}
	wcancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("hung Finish = %v; want context.Canceled", err)
	}
	if err := w.Abort(); err != nil {
		t.Fatalf("Abort after the context ended: %v", err)
	}
	if st, _ := s.ListStaged(context.Background(), "run/other"); len(st) != 0 {
		t.Fatalf("staged after Abort: %v", st)
	}
}

func TestHalfSucceedDoesTheWorkAndFails(t *testing.T) {
	ctx := context.Background()
	s := memstorage.New(publish.Caps{HidesParts: true})

	// CompletePart: the object is visible, and the error says otherwise;
	// completing again rolls forward.
	p := storagetest.Stage(t, s, "run/part", []byte("data"))
	s.Inject(memstorage.Fault{Op: memstorage.OpCompletePart, Mode: memstorage.HalfSucceed, Count: 1})
	if err := s.CompletePart(ctx, p); !errors.Is(err, memstorage.ErrInjected) {
		t.Fatalf("CompletePart = %v; want the fault", err)
	}
	if got, err := s.Read(ctx, "run/part"); err != nil || string(got) != "data" {
		t.Fatalf("after a half-succeeded CompletePart: %q, %v; want the object", got, err)
	}
	if err := s.CompletePart(ctx, p); err != nil {
		t.Fatalf("CompletePart again: %v", err)
	}

	// PutIfAbsent: written, reported not created.
	s.Inject(memstorage.Fault{Op: memstorage.OpPutIfAbsent, Mode: memstorage.HalfSucceed, Count: 1})
	created, err := s.PutIfAbsent(ctx, "run/_SUCCESS", nil)
	if created || !errors.Is(err, memstorage.ErrInjected) {
		t.Fatalf("PutIfAbsent = %v, %v; want false and the fault", created, err)
	}
	if _, exists, _ := s.Stat(ctx, "run/_SUCCESS"); !exists {
		t.Fatal("a half-succeeded PutIfAbsent did not write")
	}
	if created, err := s.PutIfAbsent(ctx, "run/_SUCCESS", nil); created || err != nil {
		t.Fatalf("PutIfAbsent again = %v, %v; want false: it is there", created, err)
	}

	// StagePart: the part is staged, and no writer comes back.
	s.Inject(memstorage.Fault{Op: memstorage.OpStagePart, Mode: memstorage.HalfSucceed, Count: 1})
	if w, err := s.StagePart(ctx, "lost/part"); w != nil || !errors.Is(err, memstorage.ErrInjected) {
		t.Fatalf("StagePart = %v, %v; want no writer and the fault", w, err)
	}
	if st, _ := s.ListStaged(ctx, "lost/"); len(st) != 1 {
		t.Fatalf("ListStaged after a half-succeeded StagePart = %v; want the part", st)
	}

	// Finish: the part is finished; the Part is lost, ListStaged finds it.
	s.Inject(memstorage.Fault{Op: memstorage.OpFinish, Mode: memstorage.HalfSucceed, Count: 1})
	w, err := s.StagePart(ctx, "fin/part")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = w.Write([]byte("abc"))
	if p, err := w.Finish(); p != (publish.Part{}) || !errors.Is(err, memstorage.ErrInjected) {
		t.Fatalf("Finish = %+v, %v; want no part and the fault", p, err)
	}
	st, _ := s.ListStaged(ctx, "fin/")
	if len(st) != 1 {
		t.Fatalf("ListStaged = %v", st)
	}
	if err := s.CompletePart(ctx, publish.Part{Key: st[0].Key, Token: st[0].Token, Size: 3}); err != nil {
		t.Fatalf("completing the part a half-succeeded Finish finished: %v", err)
	}

	// DeletePrefix: deleted, and the count lost.
	s.Inject(memstorage.Fault{Op: memstorage.OpDeletePrefix, Mode: memstorage.HalfSucceed, Count: 1})
	if n, err := s.DeletePrefix(ctx, "run/"); n != 0 || !errors.Is(err, memstorage.ErrInjected) {
		t.Fatalf("DeletePrefix = %d, %v; want 0 and the fault", n, err)
	}
	if ks, _ := s.List(ctx, "run/"); len(ks) != 0 {
		t.Fatalf("a half-succeeded DeletePrefix left %q", ks)
	}
}

func TestFailDoesNothing(t *testing.T) {
	ctx := context.Background()
	s := memstorage.New(publish.Caps{HidesParts: true})
	p := storagetest.Stage(t, s, "run/part", []byte("data"))
	s.Inject(memstorage.Fault{Op: memstorage.OpCompletePart, Count: 1})
	if err := s.CompletePart(ctx, p); !errors.Is(err, memstorage.ErrInjected) {
		t.Fatalf("CompletePart = %v; want the fault", err)
	}
	if _, err := s.Read(ctx, "run/part"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a failed CompletePart made the object: %v", err)
	}
	if err := s.CheckPart(ctx, p); err != nil {
		t.Fatalf("CheckPart after a failed completion: %v", err)
	}
}
