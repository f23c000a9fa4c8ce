package crawl

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/databrew/databrew-stage/urlparams"
	"github.com/databrew/databrew-stage/verdict"
)

// Settings are the engine's knobs, taken from a config's policy.
type Settings struct {
	RunID string
	// StartURLs are listing pages to start from; Starts are starts of any
	// kind (sitemaps, robots.txt files), in addition.
	StartURLs []string
	Starts    []Entry
	// PageParam, when set, is the query parameter of parameter
	// pagination: each listing start URL is page 1 of a chain (see
	// Entry.Paged), its number already set by the caller; PageStep is
	// what the number goes up by from page to page (0 means 1).
	PageParam string
	PageStep  int
	// LinkHeader follows, from every listing page, the rel="next" target
	// of its Link header as a listing page.
	LinkHeader bool
	// ListingRequest, when set, says how listing pages are requested
	// (method, headers, body); nil requests them with a GET.
	ListingRequest *ListingRequest
	// NextCursor, when set, follows the cursor a JSON listing page yields
	// (see Yield.Cursor) to the next listing request.
	NextCursor     *NextCursor
	AllowedDomains []string
	Concurrency    int
	// MaxRequests is the request budget; 0 means none.
	MaxRequests    int
	Retries        int
	Backoff        time.Duration
	MaxBackoff     time.Duration
	RetryPassDelay time.Duration
	// MaxCrawlDelay caps the Crawl-delay a robots.txt asks for.
	MaxCrawlDelay time.Duration
	Thresholds    verdict.Thresholds
	// Breaker configures pause-and-probe; a zero Pause stops at a trip.
	Breaker verdict.BreakerPolicy
	Block   BlockRules
	// Fields names the item fields in Values order, and FieldTypes says
	// their types ("float64", "list of int64"), for the per-field counts
	// of the verdict and the warnings about type errors and fields that
	// found nothing on any item.
	Fields, FieldTypes []string
	// Revisit, when set, skips item pages that are not due (see
	// RevisitPolicy); nil fetches every item page each traversal.
	Revisit *RevisitPolicy
	// MemoTag names how this run reads pages (a digest of the config's
	// extraction, say): a page memo made with another tag is not reused,
	// since a 304 would replay what another reading yielded.
	MemoTag string
	// Shard, when it is one of several, limits the run to the item pages
	// and listing items the shard owns (see Shard); the zero value crawls
	// everything.
	Shard Shard
	// IgnoreParams drops the URL parameters that never tell two pages
	// apart (session IDs, trackers) from every URL before it is queued,
	// compared or stored: start URLs, links, redirect targets and item
	// URLs; nil drops none.
	IgnoreParams *urlparams.Filter
}

// RevisitPolicy decides which item pages a traversal fetches, as
// incremental crawlers do: a page is fetched when the item is new (no
// memo of its page), when the card around its link on a listing page
// changed since that listing was last read, or when its interval ran out.
// Each fetch adapts the page's interval, Nutch-style: half as long when
// the page's items changed, half again as long when they did not, within
// MinAfter and MaxAfter; the page is due again after the interval less up
// to a quarter (jitter), so pages first read together spread over runs.
type RevisitPolicy struct {
	MinAfter, MaxAfter time.Duration
}

// BlockRules recognise a page or a status that says the crawler is
// blocked, whatever the page's format. (A [block] selector needs an HTML
// document: the HTML readers apply those.)
type BlockRules struct {
	Texts    []string
	Statuses []int
}

// Deps are the engine's collaborators.
type Deps struct {
	Fetcher Fetcher
	// Store keeps the queue and the items; Run needs it, Inspect does not.
	Store Store
	// Readers read the pages of each kind the crawl queues; listing and
	// item pages need one.
	Readers map[Kind]PageReader
	// Robots, when set, is asked before every URL.
	Robots Robots
	// Pacer, when set, spaces requests per host.
	Pacer      Pacer
	Middleware []Middleware
	Refresh    RefreshFunc
	// Clock defaults to SystemClock.
	Clock Clock
	// Logger defaults to a logger that discards.
	Logger *slog.Logger
	// Progress, when set, receives a snapshot a few times a second.
	Progress func(Progress)
}

// Engine crawls one config's site for one run.
type Engine struct {
	s          Settings
	d          Deps
	scope      Scope
	starts     []Entry
	blockTexts [][]byte
	blockCodes map[int]bool
	log        *slog.Logger

	hdrMu  sync.Mutex
	hdr    http.Header
	hdrGen int

	// delayWarned holds the hosts whose Crawl-delay was capped.
	delayWarned sync.Map
}

// New checks the settings and returns an engine ready to Run once.
func New(s Settings, d Deps) (*Engine, error) {
	if d.Fetcher == nil || d.Readers[KindListing] == nil || d.Readers[KindItem] == nil {
		return nil, errors.New("crawl engine needs a fetcher and readers of listing and item pages")
	}
	if err := s.Shard.Valid(); err != nil {
		return nil, err
	}
	if s.Concurrency < 1 {
		s.Concurrency = 1
	}
	if d.Clock == nil {
		d.Clock = SystemClock{}
	}
	e := &Engine{s: s, d: d, scope: NewScope(s.AllowedDomains), log: d.Logger, blockCodes: map[int]bool{}}
	if e.log == nil {
		e.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	starts := s.Starts
	for _, raw := range s.StartURLs {
		starts = append(starts, Entry{URL: raw, Kind: KindListing, Paged: s.PageParam != ""})
	}
	for _, st := range starts {
		norm, u, ok := e.canon(st.URL)
		if !ok {
			return nil, fmt.Errorf("start URL %q is not an absolute http or https URL", st.URL)
		}
		if !e.scope.Allows(u) {
			return nil, fmt.Errorf("start URL %q is outside allowed_domains %s", st.URL, strings.Join(s.AllowedDomains, ", "))
		}
		if d.Readers[st.Kind] == nil {
			return nil, fmt.Errorf("start URL %q is a %s page, and the engine has no reader for those", st.URL, st.Kind)
		}
		e.starts = append(e.starts, Entry{URL: norm, Kind: st.Kind, Start: true, Paged: st.Paged})
	}
	if len(e.starts) == 0 {
		return nil, errors.New("crawl engine needs at least one start URL")
	}
	for _, t := range s.Block.Texts {
		e.blockTexts = append(e.blockTexts, []byte(t))
	}
	for _, c := range s.Block.Statuses {
		e.blockCodes[c] = true
	}
	return e, nil
}

// canon is Normalize, then the URL without the parameters IgnoreParams
// drops.
func (e *Engine) canon(raw string) (string, *url.URL, bool) {
	norm, u, ok := Normalize(raw)
	if ok && e.s.IgnoreParams.Strip(u) {
		norm = u.String()
	}
	return norm, u, ok
}

// Result is what a run came to: its part of the verdict, and the facts
// the outcome rules read.
type Result struct {
	verdict.Crawl
	Facts verdict.Facts
}

// failed is the result of a run that could not go on because of err.
func failed(err error) Result {
	return Result{Crawl: verdict.Crawl{Stop: verdict.StopError, Detail: err.Error()}}
}

// headers returns the extra request headers a refresh set, and their
// generation.
func (e *Engine) headers() (http.Header, int) {
	e.hdrMu.Lock()
	defer e.hdrMu.Unlock()
	return e.hdr, e.hdrGen
}
