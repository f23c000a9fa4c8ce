package stage

import (
	"context"
	"net/url"

	"github.com/databrew/databrew-stage/config"
	"github.com/databrew/databrew-stage/crawl"
	"github.com/databrew/databrew-stage/render"
)

// kindFetcher loads the page kinds [render] names in the browser and every
// other request (sitemaps, robots.txt, unrendered kinds) with plain HTTP.
type kindFetcher struct {
	plain, rendered crawl.Fetcher
	render          *config.Render
}

func (f kindFetcher) Fetch(ctx context.Context, req crawl.Request) (*crawl.Response, error) {
	if f.render.Renders(req.Kind) {
		return f.rendered.Fetch(ctx, req)
	}
	return f.plain.Fetch(ctx, req)
}

// startRenderer finds the browser and starts it with what a plain request
// of cfg is sent with: its scope, robots.txt, pacer, headers, cookies,
// user agent, timeout, redirects and body limit. A browser not found, or
// one that does not start, is a config error at the [render] table.
func startRenderer(cfg config.Config, opts Options, robots crawl.Robots, pacer crawl.Pacer, userAgent string) (*render.Renderer, error) {
	path, err := render.Find(opts.getenv(), nil)
	if err != nil {
		return nil, renderError(cfg, err)
	}
	scope := crawl.NewScope(cfg.AllowedDomains)
	p := cfg.Policy
	r, err := render.Start(render.Options{
		Browser: path, Pages: cfg.Render.Pages, WaitFor: cfg.Render.WaitFor, Block: cfg.Render.Block,
		InScope: func(u *url.URL) bool { return scope.Allows(u) }, Robots: robots, Pacer: pacer,
		Header: cfg.Request.Header(), Cookies: cfg.Request.HTTPCookies(), CookieDomains: cfg.AllowedDomains,
		UserAgent: userAgent, Timeout: p.Timeout, MaxRedirects: p.MaxRedirects, MaxBodyBytes: p.MaxBodyBytes,
		Idle: opts.RenderIdle, Logger: opts.Logger,
	})
	if err != nil {
		return nil, renderError(cfg, err)
	}
	return r, nil
}

// renderError is a problem with the browser as a config error, located at
// the [render] table: nothing can be rendered, so nothing runs.
func renderError(cfg config.Config, err error) error {
	return config.Errors{{File: cfg.File, Line: cfg.Render.Line, Key: "render", Msg: err.Error()}}
}

// CheckBrowser finds and starts the browser a config with [render] needs,
// then stops it, so that a command can fail with a config error before any
// request; a config without [render] needs none. Its error is a
// config.Errors naming the [render] table.
func CheckBrowser(cfg config.Config, opts Options) error {
	if cfg.Render == nil {
		return nil
	}
	r, err := startRenderer(cfg, opts, nil, nil, "")
	if err != nil {
		return err
	}
	r.Close()
	return nil
}
