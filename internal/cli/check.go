package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/databrew/databrew-stage/config"
	"github.com/databrew/databrew-stage/crawl"
	"github.com/databrew/databrew-stage/extract"
	"github.com/databrew/databrew-stage/stage"
	"github.com/databrew/databrew-stage/verdict"
)

const checkUsage = `Usage: databrew-stage check CONFIG [--url URL]

Validates CONFIG (exit 2 with file:line: key for every problem), then visits
the first start URL as a listing page and one item page (--url, or the first
item link found) exactly as a run would — scope, robots.txt, retries, block
rules, body checks, extraction — and shows what each yields and, when a run
could not use it, why. Nothing is written. Exit 1 when a page cannot be
fetched or used.`

func checkCmd(args []string, env Env) int {
	fs := newFlags("check", checkUsage, env)
	itemURL := fs.String("url", "", "item page to extract (default: the first item link on the listing)")
	timeout := fs.Duration("timeout", 30*time.Second, "time limit for the whole check")
	if code, done := parseFlags(fs, args, env); done {
		return code
	}
	if fs.NArg() != 1 {
		return usageError(env, "check", "exactly one CONFIG is required")
	}
	cfg, err := config.LoadWith(fs.Arg(0), config.Options{Getenv: env.Getenv})
	if err == nil {
		err = stage.CheckBrowser(*cfg, stage.Options{Getenv: env.Getenv})
	}
	if err != nil {
		fmt.Fprintln(env.Stderr, err)
		return ExitUsage
	}
	fmt.Fprintf(env.Stdout, "config %s: ok (%s)\n", cfg.Name, cfg.File)
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	var opts stage.Options
	if env.RunOptions != nil {
		env.RunOptions(&opts)
	}
	rep, err := stage.Check(ctx, *cfg, opts, *itemURL)
	if err != nil {
		fmt.Fprintf(env.Stderr, "databrew-stage check: %v\n", err)
		return ExitFailed
	}
	p := checkPrinter{out: env.Stdout, fields: rep.Fields, request: cfg.ListingRequest, render: rep.Rendered}
	ok := true
	for _, in := range rep.Listings {
		ok = p.listing(in, cfg.Extract.Listing.HasCards()) && ok
	}
	switch {
	case rep.Item != nil:
		ok = p.item(*rep.Item) && ok
	case !cfg.Extract.Listing.HasCards():
		fmt.Fprintln(env.Stdout, "\nitem: no item link to check (give one with --url)")
		ok = false
	}
	if rep.Render != nil {
		p.renderSummary(*rep.Render, rep.Subresources)
	}
	if !ok {
		return ExitFailed
	}
	return ExitOK
}

// renderSummary says what the browser did over the pages check rendered.
func (p checkPrinter) renderSummary(r verdict.Render, subresources int) {
	fmt.Fprintf(p.out, "\nrender: %d pages rendered in %s (%s); %d subresources loaded; blocked: %d by resource type, %d off allowed_domains, %d by robots.txt\n",
		r.Rendered, r.Browser, p.render, subresources, r.Blocked.ResourceType, r.Blocked.OffDomain, r.Blocked.Robots)
}

// checkPrinter prints what check found.
type checkPrinter struct {
	out    io.Writer
	fields []extract.FieldSpec
	// request is [listing] request, whose body check shows as written.
	request *config.ListingRequest
	// render is [render]: the page kinds check loaded in the browser.
	render *config.Render
}

// page prints what one visit came to and reports whether a run could use
// the page.
func (p checkPrinter) page(what string, in crawl.Inspection) bool {
	fmt.Fprintf(p.out, "\n%s %s\n", what, in.URL)
	if in.AnsweredBy != "" {
		fmt.Fprintf(p.out, "  redirected to %s\n", in.AnsweredBy)
	}
	if in.Status != 0 {
		charset := in.Charset
		if charset == "" {
			charset = "none"
		}
		fmt.Fprintf(p.out, "  HTTP %d, %d bytes, charset %s, content type %q\n", in.Status, in.Bytes, charset, in.ContentType)
	}
	if p.render.Renders(in.Kind) {
		how := "once the load event fired and no request was in flight for 500 ms"
		if sel := p.render.WaitFor[in.Kind]; sel != "" {
			how = fmt.Sprintf("once wait_for %q matched", sel)
		}
		fmt.Fprintf(p.out, "  rendered in headless Chromium: the DOM read %s (its size is the bytes above)\n", how)
	}
	if in.Requests > 1 {
		fmt.Fprintf(p.out, "  %d requests (retries after failures)\n", in.Requests)
	}
	switch {
	case in.Blocked != "":
		fmt.Fprintf(p.out, "  blocked: %s: a run stops as blocked here\n", in.Blocked)
		return false
	case in.Class == verdict.ClassFailure:
		fmt.Fprintf(p.out, "  failure: %s: a run counts it toward the stop rules and retries it later\n", in.Reason)
		return false
	case in.Class != verdict.ClassOK:
		fmt.Fprintf(p.out, "  not usable: %s\n", in.Reason)
		return false
	case in.Gap:
		fmt.Fprintf(p.out, "  read in part: %s\n", in.Reason)
	}
	for _, g := range in.Gaps[:min(len(in.Gaps), 3)] {
		fmt.Fprintf(p.out, "  gap %s: %s\n", g.URL, g.Reason)
	}
	for _, n := range in.Notes {
		fmt.Fprintf(p.out, "  note: %s\n", n.Text)
	}
	return true
}

// listing prints what a listing page yields; cards says the config reads
// items from listing cards.
func (p checkPrinter) listing(in crawl.Inspection, cards bool) bool {
	if !p.page(in.Kind.String(), in) {
		return false
	}
	if in.Kind == crawl.KindListing && p.request != nil && (p.request.Method != "GET" || p.request.HasBody) {
		fmt.Fprintf(p.out, "  requested with %s", p.request.Method)
		if p.request.HasBody {
			fmt.Fprintf(p.out, ", the body as written: %s", p.request.BodyAsWritten)
		}
		fmt.Fprintln(p.out)
	}
	if len(in.Sitemaps) > 0 {
		fmt.Fprintf(p.out, "  sitemaps: %d (%s)\n", len(in.Sitemaps), in.Sitemaps[0])
		if in.Kind != crawl.KindListing {
			return true
		}
	}
	fmt.Fprintf(p.out, "  item links: %d\n", len(in.ItemLinks))
	for i, l := range in.ItemLinks {
		if i == 3 {
			fmt.Fprintf(p.out, "    ... %d more\n", len(in.ItemLinks)-3)
			break
		}
		fmt.Fprintf(p.out, "    %s\n", l)
	}
	fmt.Fprintf(p.out, "  next pages: %d", len(in.Next))
	if len(in.Next) > 0 {
		next := in.Next[0]
		fmt.Fprint(p.out, " (")
		if next.Method != "" && next.Method != "GET" {
			fmt.Fprintf(p.out, "%s ", next.Method)
		}
		fmt.Fprint(p.out, next.URL)
		if next.Cursor != "" {
			fmt.Fprintf(p.out, ", the body's cursor %s", next.Cursor)
		}
		fmt.Fprint(p.out, ")")
	}
	fmt.Fprintln(p.out)
	if cards {
		fmt.Fprintf(p.out, "  item cards: %d usable\n", len(in.Items))
		if len(in.Items) > 0 {
			p.printItem(in.Items[0])
		}
	}
	if len(in.ItemLinks) == 0 && len(in.Items) == 0 && in.Kind == crawl.KindListing {
		fmt.Fprintln(p.out, "  this listing yields no item and no item link: a run that fetches it as its start fails")
		return false
	}
	return true
}

func (p checkPrinter) item(in crawl.Inspection) bool {
	if !p.page("item", in) {
		return false
	}
	if len(in.Items) == 0 {
		return false
	}
	p.printItem(in.Items[0])
	return true
}

// printItem prints an item's typed values, as JSON without HTML escapes
// ("Kessler & Voss", not "Kessler \u0026 Voss"), and why a field found
// nothing: NULL, or its default.
func (p checkPrinter) printItem(it crawl.ItemVersion) {
	fmt.Fprintf(p.out, "  key %s\n", it.Key)
	width := 12
	for _, f := range p.fields {
		width = max(width, len(f.Name))
	}
	for i, f := range p.fields {
		typ := string(f.Type)
		if f.Multiple {
			typ = "list of " + typ
		}
		line := fmt.Sprintf("  %-*s %-9s %s", width, f.Name, typ, checkValue(it.Values[i]))
		if i < len(it.Why) && it.Why[i] != "" {
			what := "default"
			if it.Values[i] == nil {
				what = "found nothing"
			}
			line += fmt.Sprintf("   (%s: %s)", what, it.Why[i])
		}
		fmt.Fprintln(p.out, line)
	}
}

// checkValue writes a value as check shows it: JSON, but a string as it
// is between quotes, so a backslash or an ampersand shows as itself (only
// a quote and control characters are escaped).
func checkValue(v any) string {
	switch v := v.(type) {
	case string:
		var b strings.Builder
		b.WriteByte('"')
		for _, r := range v {
			switch {
			case r == '"':
				b.WriteString(`\"`)
			case r < ' ':
				fmt.Fprintf(&b, "\\u%04x", r)
			default:
				b.WriteRune(r)
			}
		}
		b.WriteByte('"')
		return b.String()
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = checkValue(e)
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSuffix(b.String(), "\n")
}
