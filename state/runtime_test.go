package state

import (
	"testing"
	"time"
)

func TestClaimRunTimeOnlyMovesForward(t *testing.T) {
	db := open(t, t.TempDir())
	at := time.Date(2026, 11, 30, 0, 23, 5, 123_456_789, time.UTC)
	var got []time.Time
	// The same instant twice, then a clock set back a minute, then later.
	for _, now := range []time.Time{at, at, at.Add(-time.Minute), at.Add(time.Second)} {
		ts, err := db.ClaimRunTime(now)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ts)
	}
	want := []time.Time{at.Truncate(time.Millisecond), at.Truncate(time.Millisecond).Add(time.Millisecond),
		at.Truncate(time.Millisecond).Add(2 * time.Millisecond), at.Add(time.Second).Truncate(time.Millisecond)}
	for i := range want {
		if !got[i].Equal(want[i]) {
			t.Fatalf("claimed %v, want %v", got, want)
		}
	}
}
