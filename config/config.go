// Package config reads a stage config: one strict TOML file describing one
// site. Unknown keys are errors; every error names the file, the line and
// the key; relative paths resolve against the config file's folder.
package config

import (
	"time"

	"github.com/databrew/databrew-stage/extract"
	"github.com/databrew/databrew-stage/verdict"
)

// Config is one validated config with defaults filled in.
type Config struct {
	// File is the config file's path as it was given.
	File string
	// Name identifies the config in reports, paths and metrics.
	Name      string
	StartURLs []string
	// Storage is the absolute path of the folder that holds the config's
	// state and its .last_run.json.
	Storage string
	// Output is the export root: the absolute path of a local folder, an
	// object-storage URL such as s3://bucket/prefix?region=eu-west-1 (see
	// IsObjectStore), or an Iceberg table, iceberg://NAMESPACE.TABLE (see
	// IsIceberg and Iceberg).
	Output string
	// AllowedDomains are the hosts (and their subdomains) the crawl stays
	// on, lower-case; by default the hosts of the start URLs.
	AllowedDomains []string
	// IgnoreParams are the URL parameter name patterns dropped from every
	// URL (ignore_params, and the built-in urlparams.Defaults unless
	// ignore_params_defaults is false): they never tell two pages apart.
	IgnoreParams []string
	Policy       Policy
	Extract      extract.Spec
	// Sources are sitemaps and parameter pagination.
	Sources Sources
	Block   Block
	Export  Export
	Notify  Notify
	// Request holds the headers and cookies every request to the allowed
	// domains carries; their values print as "[redacted]".
	Request Request
	// Revisit, when set, lets a run skip item pages that are not due (the
	// [revisit] table); nil fetches every item page every traversal.
	Revisit *Revisit
	// ListingRequest, when set, says how listing pages are requested
	// ([listing] request); nil requests them with a plain GET.
	ListingRequest *ListingRequest
	// Render, when set, names the page kinds loaded in headless Chromium
	// ([render]); nil loads every page with plain HTTP and never looks for
	// a browser.
	Render *Render
	// Iceberg, when output is "iceberg://NAMESPACE.TABLE", says where the
	// table's catalog and warehouse are (the [iceberg] table); nil for
	// every other output.
	Iceberg *Iceberg
}

// Policy is how the crawl behaves toward the site and when it stops.
type Policy struct {
	MaxRequests            int
	Concurrency            int
	Delay                  time.Duration
	Timeout                time.Duration
	Retries                int
	Backoff                time.Duration
	MaxBackoff             time.Duration
	RetryPassDelay         time.Duration
	MaxConsecutiveFailures int
	MaxErrorRate           float64
	MaxUnusableRate        float64
	ErrorWindow            int
	ErrorMinSamples        int
	MinBodyBytes           int64
	MaxBodyBytes           int64
	MaxRedirects           int
	// MaxLinksPerPage bounds the item links, cards and next-page links one
	// listing page yields, each; 0 means no bound.
	MaxLinksPerPage int
	// MaxCrawlDelay caps a robots.txt Crawl-delay.
	MaxCrawlDelay time.Duration
	Pause         time.Duration
	ProbeRequests int
	MaxProbes     int
	RespectRobots bool
	// UserAgent is the configured User-Agent; empty leaves the default to
	// the caller (the stage sends databrew-stage/VERSION).
	UserAgent string
}

// Thresholds returns the stop-rule thresholds of the policy.
func (p Policy) Thresholds() verdict.Thresholds {
	return verdict.Thresholds{
		MaxConsecutiveFailures: p.MaxConsecutiveFailures,
		MaxErrorRate:           p.MaxErrorRate,
		MaxUnusableRate:        p.MaxUnusableRate,
		ErrorWindow:            p.ErrorWindow,
		ErrorMinSamples:        p.ErrorMinSamples,
	}
}

// Revisit is the [revisit] policy: an item page is fetched when the item
// is new, when its card on a listing page changed (Extract.Listing.Card),
// or when its interval ran out; the interval adapts per item between
// MinAfter and MaxAfter, growing while the item stays unchanged and
// shrinking when a change is found.
type Revisit struct {
	MinAfter, MaxAfter time.Duration
}

// Default revisit intervals.
const (
	DefaultRevisitMinAfter = 24 * time.Hour
	DefaultRevisitMaxAfter = 14 * 24 * time.Hour
)

// Block holds the rules that recognise a page saying the crawler is
// blocked: a ban or captcha page, or a status such as 401.
type Block struct {
	Selectors []string
	Texts     []string
	Statuses  []int
}

// Export configures the export of new and changed items.
type Export struct {
	Format      string
	Tombstones  bool
	PublishWhen string
	// RowGroupRows is the rows per Parquet row group (Arrow record batch):
	// the export holds one in memory at a time.
	RowGroupRows int
	// MaxFileRows starts a new part file after this many rows.
	MaxFileRows int64
}

// Notify configures the command run after a failed run.
type Notify struct {
	Command string
	Timeout time.Duration
}

// Export formats and publish policies.
const (
	FormatParquet       = "parquet"
	FormatArrow         = "arrow"
	PublishWhenPartial  = "partial"
	PublishWhenSuccess  = "success"
	defaultStorageRoot  = "state"
	defaultOutputRoot   = "out"
	defaultMaxBodyBytes = 10 << 20
)
