package fetch

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestPolitenessSpacing(t *testing.T) {
	p := NewPoliteness(50 * time.Millisecond)
	start := time.Now()
	for i := 0; i < 4; i++ {
		if err := p.Wait(context.Background(), "a.example"); err != nil {
			t.Fatal(err)
		}
	}
	if d := time.Since(start); d < 145*time.Millisecond {
		t.Errorf("4 waits on one host took %v, want >= 150ms", d)
	}
	for _, h := range []string{"b.example", "c.example", "d.example"} {
		if !startsNow(p, h) {
			t.Errorf("the first request to %s had to wait", h)
		}
	}
	if startsNow(p, "a.example") {
		t.Error("a.example's next request did not have to wait")
	}
}

// startsNow reports whether a request to host may start without waiting:
// a limiter refuses at once a wait longer than the context's deadline, so
// no clock reading is involved.
func startsNow(p *Politeness, host string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancel()
	return p.Wait(ctx, host) == nil
}

func TestPolitenessZeroDelay(t *testing.T) {
	p := NewPoliteness(0)
	allocs := testing.AllocsPerRun(100, func() {
		if err := p.Wait(context.Background(), "a.example"); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 || len(p.hosts) != 0 {
		t.Errorf("zero delay: %v allocs, %d limiters", allocs, len(p.hosts))
	}
}

func TestPolitenessCancel(t *testing.T) {
	p := NewPoliteness(time.Hour)
	p.Wait(context.Background(), "a.example")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(30*time.Millisecond, cancel)
	start := time.Now()
	err := p.Wait(ctx, "a.example")
	if !errors.Is(err, context.Canceled) || time.Since(start) > time.Second {
		t.Errorf("Wait = %v after %v, want context.Canceled promptly", err, time.Since(start))
	}
}

func TestPolitenessSetHostDelay(t *testing.T) {
	spacing := func(p *Politeness, host string) time.Duration {
		p.Wait(context.Background(), host)
		start := time.Now()
		p.Wait(context.Background(), host)
		return time.Since(start)
	}
	p := NewPoliteness(20 * time.Millisecond)
	p.SetHostDelay("slow.example", 100*time.Millisecond)
	if d := spacing(p, "slow.example"); d < 90*time.Millisecond {
		t.Errorf("raised delay: spacing %v, want >= 100ms", d)
	}
	p.SetHostDelay("fast.example", time.Millisecond)
	if d := spacing(p, "fast.example"); d < 15*time.Millisecond {
		t.Errorf("lowered delay: spacing %v, want >= the 20ms base", d)
	}
	if d := spacing(p, "other.example"); d < 15*time.Millisecond {
		t.Errorf("untouched host: spacing %v, want the 20ms base", d)
	}

	z := NewPoliteness(0)
	z.SetHostDelay("crawl-delay.example", 60*time.Millisecond)
	if d := spacing(z, "crawl-delay.example"); d < 50*time.Millisecond {
		t.Errorf("Crawl-delay with zero base: spacing %v, want >= 60ms", d)
	}
}
