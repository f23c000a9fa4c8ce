package catalogsite

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"
)

func TestStats(t *testing.T) {
	site, srv := newServer(t, Options{})
	c := srv.Client()
	site.AddFault(Fault{Kind: FaultStub, From: 2, To: 3})
	fetch(t, c, srv.URL+"/robots.txt")
	fetch(t, c, srv.URL+"/catalogue/item-1.html")
	fetch(t, c, srv.URL+"/catalogue/item-1.html")
	fetch(t, c, srv.URL+"/catalogue/item-1.html?x=1")
	fetch(t, c, StartURL(srv.URL))
	if site.Requests() != 4 || site.RobotsRequests() != 1 {
		t.Errorf("Requests %d, RobotsRequests %d", site.Requests(), site.RobotsRequests())
	}
	if got := site.PageRequests("/catalogue/item-1.html"); got != 3 {
		t.Errorf("PageRequests(item-1) = %d, want 3", got)
	}
	if site.PageRequests("/catalogue/page-1.html") != 1 || site.PageRequests("/nope") != 0 {
		t.Error("PageRequests")
	}
	if site.Served(FaultStub) != 1 || site.Served(FaultKind(-1)) != 0 || site.Served(numFaultKinds) != 0 {
		t.Errorf("Served(FaultStub) = %d", site.Served(FaultStub))
	}

	site.ResetStats()
	if site.Requests() != 0 || site.RobotsRequests() != 0 || site.Served(FaultStub) != 0 || site.PageRequests("/catalogue/item-1.html") != 0 {
		t.Error("ResetStats left counters")
	}
	// Ordinals restart after ResetStats, so the [2,3) fault fires again.
	got := statuses(t, c, srv.URL, "/catalogue/item-2.html", 3)
	r := fetch(t, c, srv.URL+"/catalogue/item-2.html")
	if got[0] != 200 || site.Served(FaultStub) != 1 || r.status != 200 {
		t.Errorf("after reset: %v, Served(FaultStub) = %d", got, site.Served(FaultStub))
	}
}

func TestLatency(t *testing.T) {
	site, srv := newServer(t, Options{Latency: 60 * time.Millisecond})
	start := time.Now()
	fetchOK(t, srv.Client(), StartURL(srv.URL))
	if d := time.Since(start); d < 60*time.Millisecond {
		t.Errorf("answered after %v", d)
	}
	start = time.Now()
	fetchOK(t, srv.Client(), srv.URL+"/robots.txt")
	if d := time.Since(start); d >= 60*time.Millisecond {
		t.Errorf("robots.txt delayed %v", d)
	}
	if site.Options().Latency != 60*time.Millisecond {
		t.Error("Options")
	}
}

func TestConcurrentServingAndMutation(t *testing.T) {
	site, srv := newServer(t, Options{Items: 200, Gzip: true, Charset: "iso-8859-1"})
	site.AddFault(Fault{Kind: FaultStatus, Status: 503, Match: func(ord int64, _ *http.Request) bool { return ord%10 == 0 }})
	c := srv.Client()
	ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; ctx.Err() == nil && i < 300; i++ {
				u := fmt.Sprintf("%s/catalogue/item-%d.html", srv.URL, 1+(i*7+w)%220)
				if i%5 == 0 {
					u = fmt.Sprintf("%s/catalogue/page-%d.html", srv.URL, 1+i%12)
				}
				resp, err := c.Get(u)
				if err != nil {
					errs <- err
					return
				}
				resp.Body.Close()
			}
		}(w)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 1; ctx.Err() == nil && i < 200; i++ {
			site.SetPrice(i, float64(i))
			site.SetTitle(i, "T")
			site.Remove(i)
			site.Restore(i - 1)
			if i%50 == 0 {
				site.Add(5)
				site.ResetStats()
			}
			_ = site.Items()
			_ = site.ListingPages()
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if site.VisibleCount() < 1 || site.VisibleCount() > 220 {
		t.Errorf("VisibleCount %d", site.VisibleCount())
	}
}

func TestServe(t *testing.T) {
	site := New(Options{Items: 10})
	site.AddFault(Fault{Kind: FaultHang, PathPrefix: "/catalogue/item-3."})
	ctx, cancel := context.WithCancel(context.Background())
	base, wait, err := site.Serve(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Timeout: 5 * time.Second}
	fetchOK(t, c, StartURL(base))
	hung := make(chan error, 1)
	go func() {
		resp, err := c.Get(base + "/catalogue/item-3.html")
		if err == nil {
			resp.Body.Close()
		}
		hung <- err
	}()
	for deadline := time.Now().Add(time.Minute); site.Served(FaultHang) == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the hanging request never reached the site")
		}
	}
	start := time.Now()
	cancel()
	if err := wait(); err != nil {
		t.Errorf("wait: %v", err)
	}
	if err := wait(); err != nil {
		t.Errorf("second wait: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("shutdown took %v despite a hanging request", d)
	}
	if err := <-hung; err == nil {
		t.Error("hanging request got a response")
	}
	if _, err := c.Get(StartURL(base)); err == nil {
		t.Error("server still answers after shutdown")
	}
	if _, _, err := site.Serve(context.Background(), "256.0.0.1:0"); err == nil {
		t.Error("Serve accepted a bad address")
	}
}
