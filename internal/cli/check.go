package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"time"

	"github.com/databrew/databrew-stage/config"
	"github.com/databrew/databrew-stage/crawl"
	"github.com/databrew/databrew-stage/extract"
	"github.com/databrew/databrew-stage/fetch"
)

const checkUsage = `Usage: databrew-stage check CONFIG [--url URL]

Validates CONFIG (exit 2 with file:line: key for every problem), then
fetches the first start URL and shows what the listing yields, and fetches
one item page (--url, or the first item link found) and shows the item it
extracts. Nothing is written. Exit 1 when a page cannot be fetched or used.`

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
	cfg, err := config.Load(fs.Arg(0))
	if err != nil {
		fmt.Fprintln(env.Stderr, err)
		return ExitUsage
	}
	x, err := extract.Compile(cfg.Extract)
	if err != nil {
		fmt.Fprintln(env.Stderr, err)
		return ExitUsage
	}
	fmt.Fprintf(env.Stdout, "config %s: ok (%s)\n", cfg.Name, cfg.File)
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	c := &checker{cfg: cfg, x: x, out: env.Stdout, client: fetch.New(fetch.Config{
		UserAgent: cfg.Policy.UserAgent, Timeout: cfg.Policy.Timeout, MaxBodyBytes: cfg.Policy.MaxBodyBytes,
		MaxRedirects: cfg.Policy.MaxRedirects,
	})}
	defer c.client.Close()
	first, ok := c.listing(ctx, cfg.StartURLs[0])
	if !ok && *itemURL == "" {
		return ExitFailed
	}
	if *itemURL == "" {
		*itemURL = first
	}
	if *itemURL == "" {
		if cfg.Extract.Listing.Items == "" {
			fmt.Fprintln(env.Stdout, "item: no item link to check (give one with --url)")
			return ExitFailed
		}
		return exitFor(ok)
	}
	return exitFor(c.item(ctx, *itemURL) && ok)
}

func exitFor(ok bool) int {
	if ok {
		return ExitOK
	}
	return ExitFailed
}

type checker struct {
	cfg    *config.Config
	x      *extract.Extractor
	client *fetch.Client
	out    io.Writer
}

// get fetches a page and parses it, printing what went wrong.
func (c *checker) get(ctx context.Context, what, raw string) (*fetch.Response, *url.URL, bool) {
	fmt.Fprintf(c.out, "\n%s %s\n", what, raw)
	resp, err := c.client.Fetch(ctx, raw, nil)
	if err != nil {
		fmt.Fprintf(c.out, "  fetch failed: %v\n", err)
		return nil, nil, false
	}
	fmt.Fprintf(c.out, "  HTTP %d, %d bytes, charset %s\n", resp.Status, len(resp.Body), resp.Charset)
	if resp.Status < 200 || resp.Status > 299 {
		resp.Release()
		return nil, nil, false
	}
	if int64(len(resp.Body)) < c.cfg.Policy.MinBodyBytes {
		fmt.Fprintf(c.out, "  body shorter than min_body_bytes (%d): a run counts this page as a failure\n", c.cfg.Policy.MinBodyBytes)
	}
	return resp, resp.FinalURL, true
}

func (c *checker) listing(ctx context.Context, raw string) (firstItem string, ok bool) {
	resp, base, ok := c.get(ctx, "listing", raw)
	if !ok {
		return "", false
	}
	defer resp.Release()
	doc, err := c.x.Parse(resp.Body)
	if err != nil {
		fmt.Fprintf(c.out, "  cannot parse HTML: %v\n", err)
		return "", false
	}
	ls := c.x.Listing(doc, base)
	fmt.Fprintf(c.out, "  item links: %d\n", len(ls.ItemLinks))
	for i, l := range ls.ItemLinks {
		if i == 3 {
			fmt.Fprintf(c.out, "    ... %d more\n", len(ls.ItemLinks)-3)
			break
		}
		fmt.Fprintf(c.out, "    %s\n", l)
	}
	fmt.Fprintf(c.out, "  next pages: %d", len(ls.NextPages))
	if len(ls.NextPages) > 0 {
		fmt.Fprintf(c.out, " (%s)", ls.NextPages[0])
	}
	fmt.Fprintln(c.out)
	if c.cfg.Extract.Listing.Items != "" {
		fmt.Fprintf(c.out, "  item cards: %d usable, %d unusable\n", len(ls.Items), len(ls.Unusable))
		if len(ls.Items) > 0 {
			c.printItem(ls.Items[0])
		}
		for _, u := range ls.Unusable[:min(len(ls.Unusable), 3)] {
			fmt.Fprintf(c.out, "    unusable card %s: %v\n", u.URL, u.Err)
		}
	}
	if len(ls.ItemLinks) == 0 && len(ls.Items) == 0 {
		fmt.Fprintln(c.out, "  this listing yields nothing: a run that fetches it fails")
		return "", false
	}
	if len(ls.ItemLinks) > 0 {
		if norm, _, ok := crawl.Normalize(ls.ItemLinks[0]); ok {
			firstItem = norm
		}
	}
	return firstItem, true
}

func (c *checker) item(ctx context.Context, raw string) bool {
	resp, base, ok := c.get(ctx, "item", raw)
	if !ok {
		return false
	}
	defer resp.Release()
	doc, err := c.x.Parse(resp.Body)
	if err != nil {
		fmt.Fprintf(c.out, "  cannot parse HTML: %v\n", err)
		return false
	}
	it, err := c.x.Item(doc, base)
	if err != nil {
		fmt.Fprintf(c.out, "  %v\n", err)
		return false
	}
	c.printItem(it)
	return true
}

func (c *checker) printItem(it extract.Item) {
	fmt.Fprintf(c.out, "  key %s\n", it.Key)
	for i, f := range c.x.Fields() {
		b, _ := json.Marshal(it.Values[i])
		fmt.Fprintf(c.out, "  %-12s %-9s %s\n", f.Name, f.Type, b)
	}
}
