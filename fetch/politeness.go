package fetch

import (
	"context"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Politeness enforces a minimum delay between request starts per host. It
// is safe for concurrent use.
type Politeness struct {
	base time.Duration

	mu    sync.Mutex
	hosts map[string]*rate.Limiter
}

// NewPoliteness returns a Politeness with delay as every host's minimum
// spacing between request starts; 0 disables spacing for hosts without a
// delay of their own.
func NewPoliteness(delay time.Duration) *Politeness {
	return &Politeness{base: max(delay, 0), hosts: make(map[string]*rate.Limiter)}
}

// Wait blocks until a request to host may start or ctx ends, in which case
// it returns ctx's error.
func (p *Politeness) Wait(ctx context.Context, host string) error {
	lim := p.limiter(host)
	if lim == nil {
		return ctx.Err()
	}
	return lim.Wait(ctx)
}

// SetHostDelay sets host's delay to d (typically its robots.txt Crawl-delay),
// never below the base delay.
func (p *Politeness) SetHostDelay(host string, d time.Duration) {
	d = max(d, p.base)
	p.mu.Lock()
	defer p.mu.Unlock()
	if lim := p.hosts[host]; lim != nil {
		lim.SetLimit(rate.Every(d))
		return
	}
	if d > 0 {
		p.hosts[host] = rate.NewLimiter(rate.Every(d), 1)
	}
}

// limiter returns host's limiter, creating it when there is a base delay;
// nil means the host needs no waiting.
func (p *Politeness) limiter(host string) *rate.Limiter {
	p.mu.Lock()
	defer p.mu.Unlock()
	lim := p.hosts[host]
	if lim == nil && p.base > 0 {
		lim = rate.NewLimiter(rate.Every(p.base), 1)
		p.hosts[host] = lim
	}
	return lim
}
