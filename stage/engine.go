package stage

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"time"

	"github.com/databrew/databrew-stage/config"
	"github.com/databrew/databrew-stage/crawl"
	"github.com/databrew/databrew-stage/extract"
	"github.com/databrew/databrew-stage/fetch"
	"github.com/databrew/databrew-stage/internal/buildinfo"
	"github.com/databrew/databrew-stage/internal/gctune"
	"github.com/databrew/databrew-stage/pages"
	"github.com/databrew/databrew-stage/render"
	"github.com/databrew/databrew-stage/urlparams"
	"github.com/databrew/databrew-stage/verdict"
)

// pageReaders builds the readers of the kinds of page the config's crawl
// queues, in the formats it names.
func pageReaders(cfg config.Config, x *extract.Extractor) (map[crawl.Kind]crawl.PageReader, error) {
	h := pages.HTML{MinBodyBytes: cfg.Policy.MinBodyBytes, Block: cfg.Block.Selectors}
	var listing, item crawl.PageReader
	var err error
	if x.ListingFormat() == extract.FormatJSON {
		listing = pages.NewJSONListing(x)
	} else if listing, err = pages.NewHTMLListing(x, h); err != nil {
		return nil, err
	}
	if x.ItemFormat() == extract.FormatJSON {
		item = pages.JSONItem{X: x}
	} else if item, err = pages.NewHTMLItem(x, h); err != nil {
		return nil, err
	}
	readers := map[crawl.Kind]crawl.PageReader{crawl.KindListing: listing, crawl.KindItem: item}
	if len(cfg.Sources.Sitemaps) > 0 {
		readers[crawl.KindSitemap] = pages.Sitemap{Match: cfg.Sources.SitemapMatch, MaxBytes: cfg.Policy.MaxBodyBytes}
		readers[crawl.KindRobots] = pages.Robots{}
	}
	return readers, nil
}

// starts are where the config's crawl starts: its listing pages (with
// parameter pagination, the first page of each), and the sitemaps it names
// — listed, or those of each start host's robots.txt.
func starts(cfg config.Config) (listings []string, others []crawl.Entry) {
	listings, sitemaps, _ := cfg.StartKinds()
	if pg := cfg.Sources.Pages; pg != nil {
		for i, l := range listings {
			if u, err := url.Parse(l); err == nil {
				listings[i] = crawl.SetPageNumber(u, pg.Param, pg.Start)
			}
		}
	}
	for _, s := range sitemaps {
		others = append(others, crawl.Entry{URL: s, Kind: crawl.KindSitemap})
	}
	for _, s := range cfg.Sources.Sitemaps {
		if s != config.SitemapsRobots {
			others = append(others, crawl.Entry{URL: s, Kind: crawl.KindSitemap})
			continue
		}
		seen := map[string]bool{}
		for _, start := range cfg.StartURLs {
			u, err := url.Parse(start)
			if err != nil || seen[u.Scheme+"://"+u.Host] {
				continue
			}
			seen[u.Scheme+"://"+u.Host] = true
			others = append(others, crawl.Entry{URL: u.Scheme + "://" + u.Host + "/robots.txt", Kind: crawl.KindRobots})
		}
	}
	return listings, others
}

// newEngine wires the crawl engine for cfg to the real adapters: the HTTP
// client with its scope, body limits and redirects, robots.txt, per-host
// pacing, the compiled extraction and the block rules. Run and Check
// share it, so what check says of a page is what a run makes of it. A nil
// store builds an engine that can Inspect but not Run. Closing the wiring
// closes the client and stops the browser of a config with [render].
func newEngine(cfg config.Config, opts Options, store crawl.Store, runID string, clock crawl.Clock) (eng *crawl.Engine, w *wiring, err error) {
	x, err := extract.Compile(cfg.Extract)
	if err != nil {
		return nil, nil, err
	}
	p := cfg.Policy
	userAgent := p.UserAgent
	if userAgent == "" {
		userAgent = buildinfo.UserAgent()
	}
	scope := crawl.NewScope(cfg.AllowedDomains)
	jar, err := fetch.NewJar(cfg.AllowedDomains, cfg.Request.HTTPCookies(), cfg.Request.CookieJar)
	if err != nil {
		return nil, nil, fmt.Errorf("request.cookies: %w", err)
	}
	client := fetch.New(fetch.Config{
		UserAgent: userAgent, Timeout: p.Timeout, MaxBodyBytes: p.MaxBodyBytes,
		MaxRedirects: p.MaxRedirects, InScope: func(u *url.URL) bool { return scope.Allows(u) },
		Header: cfg.Request.Header(), Jar: jar,
		MaxConnsPerHost: p.Concurrency, Transport: opts.Transport,
		BodyBudget: gctune.BodyBudget(p.MaxBodyBytes),
	})
	readers, err := pageReaders(cfg, x)
	if err != nil {
		client.Close()
		return nil, nil, err
	}
	deps := crawl.Deps{
		Fetcher: httpFetcher{client: client}, Readers: readers,
		Middleware: opts.Middleware, Refresh: opts.Refresh, Clock: clock, Logger: opts.Logger, Progress: opts.Progress,
	}
	if store != nil {
		deps.Store = store
	}
	if p.RespectRobots {
		deps.Robots = fetch.NewRobots(client, userAgent, p.Timeout)
	}
	var shard crawl.Shard
	if opts.Shard != nil {
		shard = opts.Shard.crawl()
	}
	if p.Delay > 0 || p.RespectRobots {
		// Spacing per host: the configured delay, or a robots.txt
		// Crawl-delay up to max_crawl_delay; a shard waits as many times
		// longer as there are shards, so the site sees the configured
		// rate in total.
		deps.Pacer = fetch.NewPoliteness(p.Delay * time.Duration(max(shard.Count, 1)))
	}
	var renderer *render.Renderer
	if cfg.Render != nil {
		if renderer, err = startRenderer(cfg, opts, deps.Robots, deps.Pacer, userAgent); err != nil {
			client.Close()
			return nil, nil, err
		}
		deps.Fetcher = kindFetcher{plain: deps.Fetcher, rendered: renderer, render: cfg.Render}
	}
	w = &wiring{client: client, renderer: renderer}
	maxRequests := p.MaxRequests
	if opts.MaxRequests > 0 {
		maxRequests = opts.MaxRequests
	}
	params, err := urlparams.New(cfg.IgnoreParams)
	if err != nil {
		w.close()
		return nil, nil, fmt.Errorf("ignore_params: %w", err)
	}
	listings, others := starts(cfg)
	pageParam, pageStep := "", 1
	if cfg.Sources.Pages != nil {
		pageParam, pageStep = cfg.Sources.Pages.Param, cfg.Sources.Pages.Step
	}
	eng, err = crawl.New(crawl.Settings{
		RunID: runID, StartURLs: listings, Starts: others, PageParam: pageParam, PageStep: pageStep, LinkHeader: cfg.Sources.LinkHeader, AllowedDomains: cfg.AllowedDomains,
		Concurrency: p.Concurrency, MaxRequests: maxRequests, Retries: p.Retries,
		Backoff: p.Backoff, MaxBackoff: p.MaxBackoff, RetryPassDelay: p.RetryPassDelay, MaxCrawlDelay: p.MaxCrawlDelay,
		Thresholds: p.Thresholds(),
		Breaker:    verdict.BreakerPolicy{Pause: p.Pause, ProbeRequests: p.ProbeRequests, MaxProbes: p.MaxProbes},
		Block:      crawl.BlockRules{Texts: cfg.Block.Texts, Statuses: cfg.Block.Statuses},
		Fields:     fieldNames(cfg.Extract.Fields),
		FieldTypes: fieldTypes(cfg.Extract.Fields),
		MemoTag:    memoTag(cfg),
		Revisit:    revisitPolicy(cfg.Revisit),
		Shard:      shard,

		IgnoreParams:   params,
		ListingRequest: listingRequest(cfg.ListingRequest),
		NextCursor:     nextCursor(cfg.Sources.Cursor),
	}, deps)
	if err != nil {
		w.close()
		return nil, nil, err
	}
	return eng, w, nil
}

// wiring is what an engine's adapters hold open: the HTTP client and, for
// a config with [render], the browser.
type wiring struct {
	client   *fetch.Client
	renderer *render.Renderer
}

// close stops the browser, if any, and closes the client.
func (w *wiring) close() {
	if w.renderer != nil {
		w.renderer.Close()
	}
	w.client.Close()
}

// renderFacts adds what the browser did to a run's result.
func (w *wiring) renderFacts(res *crawl.Result) {
	if w.renderer == nil {
		return
	}
	facts := w.renderer.Facts()
	res.Render = &facts
	res.Requests.Subresources = w.renderer.Subresources()
}

// listingRequest is the engine's form of [listing] request.
func listingRequest(lr *config.ListingRequest) *crawl.ListingRequest {
	if lr == nil {
		return nil
	}
	out := &crawl.ListingRequest{Method: lr.Method, Header: lr.Header()}
	if lr.HasBody {
		out.Body = []byte(lr.Body.Value())
	}
	return out
}

// nextCursor is the engine's form of a json next_page with param or body.
func nextCursor(c *config.Cursor) *crawl.NextCursor {
	if c == nil {
		return nil
	}
	return &crawl.NextCursor{Param: c.Param, BodyPath: c.BodyPath}
}

// revisitPolicy is the engine's form of the [revisit] table.
func revisitPolicy(r *config.Revisit) *crawl.RevisitPolicy {
	if r == nil {
		return nil
	}
	return &crawl.RevisitPolicy{MinAfter: r.MinAfter, MaxAfter: r.MaxAfter}
}

// memoTagVersion changes when the way pages are read changes in ways
// the config does not show, so memos made before are not reused.
const memoTagVersion = 1

// memoTag digests everything in cfg that decides what a page yields: a
// page memo made under another tag is not replayed on a 304 (see
// crawl.Settings.MemoTag), so a changed selector reads every page anew.
func memoTag(cfg config.Config) string {
	b, err := json.Marshal(struct {
		Version                    int
		Extract                    extract.Spec
		Sources                    config.Sources
		Listing                    *config.ListingRequest `json:",omitempty"`
		Render                     *config.Render         `json:",omitempty"`
		Block                      config.Block
		AllowedDomains             []string
		MinBody, MaxBody, MaxLinks int64
	}{memoTagVersion, cfg.Extract, cfg.Sources, cfg.ListingRequest, cfg.Render, cfg.Block, cfg.AllowedDomains,
		cfg.Policy.MinBodyBytes, cfg.Policy.MaxBodyBytes, int64(cfg.Policy.MaxLinksPerPage)})
	if err != nil {
		return "" // not reached: the config is plain data
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// fieldTypes says the item fields' types in the order of an item's
// values, as the type error warning names them.
func fieldTypes(fields []extract.FieldSpec) []string {
	types := make([]string, len(fields))
	for i, f := range fields {
		types[i] = string(f.Type)
		if types[i] == "" {
			types[i] = string(extract.TypeString)
		}
		if f.Multiple {
			types[i] = "list of " + types[i]
		}
	}
	return types
}

// fieldNames names the item fields in the order of an item's values.
func fieldNames(fields []extract.FieldSpec) []string {
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.Name
	}
	return names
}
