package publish_test

import (
	"context"
	"errors"
	"testing"

	"github.com/databrew/databrew-stage/publish"
	"github.com/databrew/databrew-stage/publish/memstorage"
)

// TestCompleteEach completes in order and stops at the first error.
func TestCompleteEach(t *testing.T) {
	ctx := context.Background()
	s := memstorage.New(publish.Caps{HidesParts: true})
	var parts []publish.Part
	for _, k := range []string{"run/a", "run/b", "run/c"} {
		w, err := s.StagePart(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		p, err := w.Finish()
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, p)
	}
	s.Inject(memstorage.Fault{Op: memstorage.OpCompletePart, Key: "run/b", Count: 1})
	if err := publish.CompleteEach(ctx, s, "run/", parts); !errors.Is(err, memstorage.ErrInjected) {
		t.Fatalf("CompleteEach = %v; want the fault", err)
	}
	if keys, _ := s.List(ctx, ""); len(keys) != 1 || keys[0] != "run/a" {
		t.Fatalf("after a failure at b: %q; want only a", keys)
	}
	if err := publish.CompleteEach(ctx, s, "run/", parts); err != nil {
		t.Fatal(err)
	}
	if keys, _ := s.List(ctx, ""); len(keys) != 3 {
		t.Fatalf("after CompleteEach again: %q", keys)
	}
	if err := publish.CompleteEach(ctx, s, "other/", parts); !errors.Is(err, publish.ErrBadKey) {
		t.Fatalf("CompleteEach into another folder = %v; want ErrBadKey", err)
	}
}
