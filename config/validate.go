package config

import (
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/andybalholm/cascadia"
	"github.com/dustin/go-humanize"
	"golang.org/x/net/http/httpguts"

	"github.com/databrew/databrew-stage/crawl"
	"github.com/databrew/databrew-stage/extract"
)

var namePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)

// validator checks a decoded config and collects every problem with its
// line, so one pass over a broken file reports all of it.
type validator struct {
	file   string
	keys   *keyIndex
	getenv func(string) string
	errs   Errors
	// linkHeader is next_page = { header = "link" }, and cursor what a json
	// next_page's value goes into, read with [listing].
	linkHeader bool
	cursor     *Cursor
}

func (v *validator) errorf(key, format string, args ...any) {
	v.errs = append(v.errs, &Error{File: v.file, Line: v.keys.line(key), Key: key, Msg: fmt.Sprintf(format, args...)})
}

func (v *validator) config(raw rawConfig) *Config {
	cfg := &Config{File: v.file, Name: raw.Name}
	switch {
	case raw.Name == "":
		v.errorf("name", "required: a short name such as \"books\"")
	case len(raw.Name) > 64 || !namePattern.MatchString(raw.Name):
		v.errorf("name", "%q must match [a-z0-9][a-z0-9_-]* (at most 64 characters): it is used in paths", raw.Name)
	}
	cfg.StartURLs = v.startURLs(raw.StartURLs)
	cfg.AllowedDomains = v.domains(raw.AllowedDomains, cfg.StartURLs)
	cfg.Storage = v.path("storage", raw.Storage, defaultStorageRoot, raw.Name)
	cfg.Output = v.output(raw.Output, raw.Name)
	if !IsObjectStore(cfg.Output) && !IsIceberg(cfg.Output) {
		v.separate(cfg.Storage, cfg.Output)
	}
	cfg.Iceberg = v.iceberg(raw.Iceberg, cfg.Output)
	cfg.Policy = v.policy(raw.Policy)
	cfg.Sources = v.sources(raw.Listing)
	v.scope(cfg)
	cfg.Extract = v.extract(raw, len(cfg.Sources.Sitemaps) > 0)
	cfg.Sources.LinkHeader, cfg.Sources.Cursor = v.linkHeader, v.cursor
	cfg.IgnoreParams = v.ignoreParams(raw, cfg.Sources)
	cfg.ListingRequest = v.listingRequest(raw.Listing.Request)
	v.checkCursor(cfg)
	cfg.Extract.IgnoreParams = cfg.IgnoreParams
	cfg.Extract.Listing.MaxLinks = cfg.Policy.MaxLinksPerPage
	cfg.Block = v.block(raw.Block)
	cfg.Export = v.export(raw.Export)
	cfg.Notify = Notify{Command: raw.Notify.Command, Timeout: v.duration("notify.timeout", raw.Notify.Timeout, time.Second)}
	cfg.Request = v.request(raw.Request)
	cfg.Revisit = v.revisit(raw.Revisit, &cfg.Extract.Listing)
	cfg.Render = v.render(raw.Render, cfg)
	return cfg
}

// revisit reads the [revisit] table; its card selector goes into the
// listing spec, where the listing reader hashes each item link's card.
func (v *validator) revisit(r *rawRevisit, listing *extract.ListingSpec) *Revisit {
	if r == nil {
		return nil
	}
	rv := &Revisit{MinAfter: DefaultRevisitMinAfter, MaxAfter: DefaultRevisitMaxAfter}
	if r.MinAfter != "" {
		rv.MinAfter = v.duration("revisit.min_after", r.MinAfter, time.Minute)
	}
	if r.MaxAfter != "" {
		rv.MaxAfter = v.duration("revisit.max_after", r.MaxAfter, time.Minute)
	}
	if rv.MaxAfter < rv.MinAfter {
		v.errorf("revisit.max_after", "%s is shorter than min_after (%s)", rv.MaxAfter, rv.MinAfter)
	}
	if listing.Items != "" {
		v.errorf("revisit", "applies to item pages, and listing.items reads every item from its listing card: remove one of them")
	}
	if r.Card != "" {
		if listing.Format == extract.FormatJSON {
			v.errorf("revisit.card", "is a CSS selector of HTML listing pages; listing.format is json")
		} else if _, err := cascadia.ParseGroup(r.Card); err != nil {
			v.errorf("revisit.card", "%q: %v", r.Card, err)
		}
		listing.Card = r.Card
	}
	return rv
}

func (v *validator) startURLs(in []string) []string {
	if len(in) == 0 {
		v.errorf("start_urls", "required: at least one http or https URL")
		return nil
	}
	out := make([]string, 0, len(in))
	for i, s := range in {
		u, err := url.Parse(strings.TrimSpace(s))
		switch {
		case err != nil:
			v.errorf("start_urls", "entry %d: %v", i+1, err)
		case u.Scheme != "http" && u.Scheme != "https":
			v.errorf("start_urls", "entry %d: %q is not an http or https URL", i+1, s)
		case u.Hostname() == "" || u.Hostname()[0] == '.':
			v.errorf("start_urls", "entry %d: %q has no host name", i+1, s)
		case len(u.String()) > crawl.MaxURLBytes:
			v.errorf("start_urls", "entry %d is %d bytes long; a URL may have at most %d", i+1, len(u.String()), crawl.MaxURLBytes)
		default:
			out = append(out, u.String())
		}
	}
	return out
}

func (v *validator) domains(in []string, starts []string) []string {
	var out []string
	for _, d := range in {
		d = strings.TrimPrefix(strings.ToLower(strings.TrimSpace(d)), ".")
		if d == "" || strings.ContainsAny(d, "/:@ ") {
			v.errorf("allowed_domains", "%q is not a host name", d)
			continue
		}
		out = append(out, d)
	}
	if len(in) == 0 {
		for _, s := range starts {
			if u, err := url.Parse(s); err == nil {
				out = append(out, strings.ToLower(u.Hostname()))
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// path resolves a storage or output path against the config file's folder;
// empty means <root>/<name>.
func (v *validator) path(key, p, root, name string) string {
	if p == "" {
		if name == "" {
			return ""
		}
		p = filepath.Join(root, name)
	}
	if !filepath.IsAbs(p) {
		dir, err := filepath.Abs(filepath.Dir(v.file))
		if err != nil {
			v.errorf(key, "cannot resolve %q: %v", p, err)
			return ""
		}
		p = filepath.Join(dir, p)
	}
	return filepath.Clean(p)
}

// separate checks that storage and output are folders of their own: not
// a file system root, and neither inside the other, so the state never
// lands in the export (which readers glob and pipelines copy) and the
// export never lands among the state's files.
func (v *validator) separate(storage, output string) {
	if storage == "" || output == "" {
		return
	}
	for _, p := range []struct{ key, path string }{{"storage", storage}, {"output", output}} {
		if filepath.Dir(p.path) == p.path {
			v.errorf(p.key, "%s is a file system root: give the config a folder of its own", p.path)
			return
		}
	}
	switch {
	case storage == output:
		v.errorf("output", "must differ from storage (%s)", storage)
	case within(output, storage):
		v.errorf("output", "%s is inside storage (%s): keep the export out of the state's folder", output, storage)
	case within(storage, output):
		v.errorf("storage", "%s is inside output (%s): the state would be published with the export", storage, output)
	}
}

// within reports whether path lies inside dir; both are clean and absolute.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

func (v *validator) duration(key, s string, minimum time.Duration) time.Duration {
	d, err := ParseDuration(s)
	if err != nil {
		v.errorf(key, "invalid duration %q (write it like \"500ms\", \"30s\", \"5m\" or \"14d\")", s)
		return 0
	}
	if d < minimum {
		if minimum == 0 {
			v.errorf(key, "must not be negative, got %s", s)
		} else {
			v.errorf(key, "must be at least %s, got %s", minimum, s)
		}
	}
	return d
}

// ParseDuration reads a duration as time.ParseDuration does, and also
// with whole days in front: "14d", "1d12h".
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	days, rest, ok := strings.Cut(s, "d")
	if !ok || days == "" || strings.Trim(days, "0123456789") != "" {
		return time.ParseDuration(s)
	}
	n, err := strconv.Atoi(days)
	if err != nil || n > 100*365 {
		return 0, fmt.Errorf("%q: too many days", s)
	}
	d := time.Duration(n) * 24 * time.Hour
	if rest == "" {
		return d, nil
	}
	r, err := time.ParseDuration(rest)
	if err != nil || r < 0 {
		return 0, fmt.Errorf("invalid duration %q", s)
	}
	return d + r, nil
}

// size reads a byte size written as an integer or as text like "10MiB".
func (v *validator) size(key string, val any) int64 {
	switch x := val.(type) {
	case int64:
		if x < 0 {
			v.errorf(key, "must not be negative, got %d", x)
		}
		return x
	case string:
		n, err := humanize.ParseBytes(x)
		if err != nil || n > 1<<40 {
			v.errorf(key, "invalid size %q (write it like 512, \"64KiB\" or \"10MiB\")", x)
			return 0
		}
		return int64(n)
	default:
		v.errorf(key, "invalid size %v (write it like 512, \"64KiB\" or \"10MiB\")", val)
		return 0
	}
}

func (v *validator) intRange(key string, n, lo, hi int) int {
	if n < lo || n > hi {
		v.errorf(key, "must be between %d and %d, got %d", lo, hi, n)
	}
	return n
}

func (v *validator) policy(r rawPolicy) Policy {
	p := Policy{
		MaxRequests:            v.intRange("policy.max_requests", r.MaxRequests, 0, 1<<31-1),
		Concurrency:            v.intRange("policy.concurrency", r.Concurrency, 1, 256),
		Delay:                  v.duration("policy.delay", r.Delay, 0),
		Timeout:                v.duration("policy.timeout", r.Timeout, time.Millisecond),
		Retries:                v.intRange("policy.retries", r.Retries, 0, 10),
		Backoff:                v.duration("policy.backoff", r.Backoff, 0),
		MaxBackoff:             v.duration("policy.max_backoff", r.MaxBackoff, 0),
		RetryPassDelay:         v.duration("policy.retry_pass_delay", r.RetryPassDelay, 0),
		MaxConsecutiveFailures: v.intRange("policy.max_consecutive_failures", r.MaxConsecutiveFailures, 0, 1<<31-1),
		MaxErrorRate:           r.MaxErrorRate,
		MaxUnusableRate:        r.MaxUnusableRate,
		ErrorWindow:            v.intRange("policy.error_window", r.ErrorWindow, 1, 1_000_000),
		ErrorMinSamples:        r.ErrorMinSamples,
		MinBodyBytes:           v.size("policy.min_body_bytes", r.MinBodyBytes),
		MaxBodyBytes:           v.size("policy.max_body_bytes", r.MaxBodyBytes),
		MaxRedirects:           v.intRange("policy.max_redirects", r.MaxRedirects, 0, 100),
		MaxLinksPerPage:        v.intRange("policy.max_links_per_page", r.MaxLinksPerPage, 0, 1_000_000),
		MaxCrawlDelay:          v.duration("policy.max_crawl_delay", r.MaxCrawlDelay, 0),
		Pause:                  v.duration("policy.pause", r.Pause, 0),
		ProbeRequests:          v.intRange("policy.probe_requests", r.ProbeRequests, 1, 1_000_000),
		MaxProbes:              v.intRange("policy.max_probes", r.MaxProbes, 1, 1_000),
		RespectRobots:          r.RespectRobots,
		UserAgent:              strings.TrimSpace(r.UserAgent),
	}
	if !(p.MaxUnusableRate >= 0 && p.MaxUnusableRate <= 1) { // NaN too
		v.errorf("policy.max_unusable_rate", "must be a share between 0 and 1 (0.5 is 50%%), got %v", r.MaxUnusableRate)
	}
	if !(p.MaxErrorRate >= 0 && p.MaxErrorRate <= 1) { // NaN too
		v.errorf("policy.max_error_rate", "must be a share between 0 and 1 (0.35 is 35%%), got %v", r.MaxErrorRate)
	}
	if p.ErrorMinSamples < 1 || p.ErrorMinSamples > p.ErrorWindow {
		v.errorf("policy.error_min_samples", "must be between 1 and error_window (%d), got %d", p.ErrorWindow, p.ErrorMinSamples)
	}
	if p.MaxBackoff < p.Backoff {
		v.errorf("policy.max_backoff", "must be at least backoff (%s), got %s", p.Backoff, p.MaxBackoff)
	}
	if p.MaxBodyBytes == 0 {
		p.MaxBodyBytes = defaultMaxBodyBytes
	}
	if p.MinBodyBytes >= p.MaxBodyBytes {
		v.errorf("policy.min_body_bytes", "must be below max_body_bytes (%d), got %d", p.MaxBodyBytes, p.MinBodyBytes)
	}
	if p.UserAgent != "" && !httpguts.ValidHeaderFieldValue(p.UserAgent) {
		v.errorf("policy.user_agent", "%q is not a valid header value (no control characters)", r.UserAgent)
	}
	return p
}

func (v *validator) extract(raw rawConfig, fromSitemaps bool) extract.Spec {
	spec := extract.Spec{Listing: v.listing(raw.Listing, fromSitemaps), Item: v.item(raw.Item), Key: raw.Item.Key}
	names := make([]string, 0, len(raw.Item.Fields))
	for name := range raw.Item.Fields {
		names = append(names, name)
	}
	// Declared order is column order.
	slices.SortFunc(names, func(a, b string) int {
		return v.keys.order("item.fields."+a) - v.keys.order("item.fields."+b)
	})
	for _, name := range names {
		spec.Fields = append(spec.Fields, v.field(name, raw.Item.Fields[name]))
	}
	if len(spec.Fields) == 0 {
		v.errorf("item.fields", "required: at least one field, such as title = { css = \"h1\" }")
		return spec
	}
	if _, err := extract.Compile(spec); err != nil {
		_, nextTable := raw.Listing.NextPage.(map[string]any)
		reported := make(map[string]bool, len(v.errs))
		for _, e := range v.errs {
			reported[e.Key] = true
		}
		for _, se := range extract.SpecErrors(err) {
			if key := specKey(se, nextTable); !reported[key] {
				v.errorf(key, "%v", se.Err)
			}
		}
	}
	return spec
}

func (v *validator) block(r rawBlock) Block {
	for i, s := range r.Selectors {
		if _, err := cascadia.ParseGroup(s); err != nil {
			v.errorf("block.selectors", "entry %d: %q: %v", i+1, s, err)
		}
	}
	for i, s := range r.Texts {
		if strings.TrimSpace(s) == "" {
			v.errorf("block.texts", "entry %d is empty", i+1)
		}
	}
	for _, s := range r.Statuses {
		if s < 400 || s > 599 {
			v.errorf("block.statuses", "%d is not an HTTP error status (400-599)", s)
		}
	}
	return Block(r)
}

func (v *validator) export(r rawExport) Export {
	if r.Format != FormatParquet && r.Format != FormatArrow {
		v.errorf("export.format", "must be %q or %q, got %q", FormatParquet, FormatArrow, r.Format)
	}
	if r.PublishWhen != PublishWhenPartial && r.PublishWhen != PublishWhenSuccess {
		v.errorf("export.publish_when", "must be %q or %q, got %q", PublishWhenPartial, PublishWhenSuccess, r.PublishWhen)
	}
	v.intRange("export.row_group_rows", r.RowGroupRows, 1, 1<<24)
	if r.MaxFileRows < 1 {
		v.errorf("export.max_file_rows", "must be at least 1, got %d", r.MaxFileRows)
	}
	return Export(r)
}
