package config

// The raw shape of a config file, decoded strictly. Durations and sizes are
// kept as written and checked afterwards, so a bad value is reported with
// its line and key.

type rawConfig struct {
	Name           string      `toml:"name"`
	StartURLs      []string    `toml:"start_urls"`
	Storage        string      `toml:"storage"`
	Output         string      `toml:"output"`
	AllowedDomains []string    `toml:"allowed_domains"`
	IgnoreParams   []string    `toml:"ignore_params"`
	IgnoreDefaults *bool       `toml:"ignore_params_defaults"`
	Policy         rawPolicy   `toml:"policy"`
	Listing        rawListing  `toml:"listing"`
	Item           rawItem     `toml:"item"`
	Block          rawBlock    `toml:"block"`
	Export         rawExport   `toml:"export"`
	Notify         rawNotify   `toml:"notify"`
	Request        rawRequest  `toml:"request"`
	Revisit        *rawRevisit `toml:"revisit"`
	Render         *rawRender  `toml:"render"`
	Iceberg        *rawIceberg `toml:"iceberg"`
}

type rawRevisit struct {
	Card     string `toml:"card"`
	MinAfter string `toml:"min_after"`
	MaxAfter string `toml:"max_after"`
}

type rawPolicy struct {
	MaxRequests            int     `toml:"max_requests"`
	Concurrency            int     `toml:"concurrency"`
	Delay                  string  `toml:"delay"`
	Timeout                string  `toml:"timeout"`
	Retries                int     `toml:"retries"`
	Backoff                string  `toml:"backoff"`
	MaxBackoff             string  `toml:"max_backoff"`
	RetryPassDelay         string  `toml:"retry_pass_delay"`
	MaxConsecutiveFailures int     `toml:"max_consecutive_failures"`
	MaxErrorRate           float64 `toml:"max_error_rate"`
	MaxUnusableRate        float64 `toml:"max_unusable_rate"`
	ErrorWindow            int     `toml:"error_window"`
	ErrorMinSamples        int     `toml:"error_min_samples"`
	MinBodyBytes           any     `toml:"min_body_bytes"`
	MaxBodyBytes           any     `toml:"max_body_bytes"`
	MaxRedirects           int     `toml:"max_redirects"`
	MaxLinksPerPage        int     `toml:"max_links_per_page"`
	MaxCrawlDelay          string  `toml:"max_crawl_delay"`
	Pause                  string  `toml:"pause"`
	ProbeRequests          int     `toml:"probe_requests"`
	MaxProbes              int     `toml:"max_probes"`
	RespectRobots          bool    `toml:"respect_robots"`
	UserAgent              string  `toml:"user_agent"`
}

type rawListing struct {
	Format       string             `toml:"format"`
	ItemLinks    any                `toml:"item_links"` // a string, or a table { js | css, json }
	NextPage     any                `toml:"next_page"`  // a string, or a table { css, attr }
	Items        any                `toml:"items"`      // a string, or a table { js | css, json }
	Sitemaps     []string           `toml:"sitemaps"`
	SitemapMatch string             `toml:"sitemap_match"`
	Pages        *rawPages          `toml:"pages"`
	End          string             `toml:"end"`
	Request      *rawListingRequest `toml:"request"`
}

type rawItem struct {
	Format      string              `toml:"format"`
	StrictTypes bool                `toml:"strict_types"`
	Key         string              `toml:"key"`
	Rows        string              `toml:"rows"`
	Fields      map[string]rawField `toml:"fields"`
}

type rawField struct {
	CSS      any            `toml:"css"` // a string or an array of strings
	JSONLD   string         `toml:"jsonld"`
	JS       string         `toml:"js"`
	JSON     string         `toml:"json"`
	Type     string         `toml:"type"`
	Attr     string         `toml:"attr"`
	Regex    string         `toml:"regex"`
	Map      map[string]any `toml:"map"`
	Decimal  string         `toml:"decimal"`
	Default  any            `toml:"default"`
	URL      bool           `toml:"url"`
	Required bool           `toml:"required"`
	Multiple bool           `toml:"multiple"`
	Scope    string         `toml:"scope"`
	Format   string         `toml:"format"`
}

type rawBlock struct {
	Selectors []string `toml:"selectors"`
	Texts     []string `toml:"texts"`
	Statuses  []int    `toml:"statuses"`
}

type rawExport struct {
	Format       string `toml:"format"`
	Tombstones   bool   `toml:"tombstones"`
	PublishWhen  string `toml:"publish_when"`
	RowGroupRows int    `toml:"row_group_rows"`
	MaxFileRows  int64  `toml:"max_file_rows"`
}

type rawNotify struct {
	Command string `toml:"command"`
	Timeout string `toml:"timeout"`
}

type rawRequest struct {
	Headers   map[string]string `toml:"headers"`
	Cookies   map[string]string `toml:"cookies"`
	CookieJar bool              `toml:"cookie_jar"`
}

// defaults returns the raw config a file's keys are decoded over.
func defaults() rawConfig {
	return rawConfig{
		Policy: rawPolicy{
			Concurrency:            8,
			Delay:                  "0s",
			Timeout:                "30s",
			Retries:                2,
			Backoff:                "500ms",
			MaxBackoff:             "30s",
			RetryPassDelay:         "30s",
			MaxConsecutiveFailures: 25,
			MaxErrorRate:           0.35,
			MaxUnusableRate:        0.5,
			ErrorWindow:            200,
			ErrorMinSamples:        50,
			MinBodyBytes:           int64(512),
			MaxBodyBytes:           "10MiB",
			MaxRedirects:           10,
			MaxLinksPerPage:        10_000,
			MaxCrawlDelay:          "30s",
			Pause:                  "5m",
			ProbeRequests:          20,
			MaxProbes:              3,
			RespectRobots:          true,
		},
		Export:  rawExport{Format: FormatParquet, PublishWhen: PublishWhenPartial, RowGroupRows: 16384, MaxFileRows: 1_000_000},
		Notify:  rawNotify{Timeout: "30s"},
		Request: rawRequest{CookieJar: true},
	}
}
