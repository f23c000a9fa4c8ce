package render

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/storage"
	"github.com/chromedp/chromedp"
)

// flags are what a headless browser needs where the stage runs: no
// window, no GPU, no calls home (the network may be closed to anything
// but the site), every frame in the page's own process so the page's
// interception sees its requests, and no shared memory file system
// assumed. --no-sandbox is added for root (see launch).
var flags = []chromedp.ExecAllocatorOption{
	chromedp.Headless,
	chromedp.DisableGPU,
	chromedp.NoFirstRun,
	chromedp.NoDefaultBrowserCheck,
	chromedp.Flag("disable-quic", true),
	chromedp.Flag("disable-background-networking", true),
	chromedp.Flag("disable-component-update", true),
	chromedp.Flag("disable-sync", true),
	chromedp.Flag("disable-site-isolation-trials", true),
	chromedp.Flag("disable-features", "site-per-process,IsolateOrigins,Translate,OptimizationHints,MediaRouter,AutofillServerCommunication"),
	chromedp.Flag("disable-dev-shm-usage", true),
	chromedp.Flag("disable-extensions", true),
	chromedp.Flag("disable-default-apps", true),
	chromedp.Flag("disable-breakpad", true),
	chromedp.Flag("disable-domain-reliability", true),
	chromedp.Flag("disable-client-side-phishing-detection", true),
	chromedp.Flag("disable-hang-monitor", true),
	chromedp.Flag("disable-popup-blocking", true),
	chromedp.Flag("disable-renderer-backgrounding", true),
	chromedp.Flag("disable-background-timer-throttling", true),
	chromedp.Flag("disable-backgrounding-occluded-windows", true),
	chromedp.Flag("metrics-recording-only", true),
	chromedp.Flag("mute-audio", true),
	chromedp.Flag("hide-scrollbars", true),
	chromedp.Flag("password-store", "basic"),
	chromedp.Flag("use-mock-keychain", true),
}

// inheritedEnv are the variables the browser gets from the stage's
// environment: none of the stage's secrets (the ${NAME} of [request]).
var inheritedEnv = []string{"HOME", "PATH", "TMPDIR", "LANG", "LC_ALL", "TZ", "FONTCONFIG_PATH", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"}

// browserProc is one browser process and the DevTools connection to it:
// a fresh profile in a temporary folder, one browser context.
type browserProc struct {
	path    string
	ctx     context.Context // its first tab's chromedp context
	cancel  context.CancelFunc
	alloc   context.CancelFunc
	pid     int
	version string
	closed  atomic.Bool
	once    sync.Once
}

// launch starts the browser at path and connects to it; it gives up after
// startTimeout. Its error is the first line the browser wrote, if any.
func launch(path string, o *Options) (*browserProc, error) {
	opts := append([]chromedp.ExecAllocatorOption{chromedp.ExecPath(path)}, flags...)
	if os.Geteuid() == 0 {
		// Chromium refuses to run as root with its sandbox (as in most
		// containers).
		opts = append(opts, chromedp.NoSandbox)
	}
	if o.UserAgent != "" {
		opts = append(opts, chromedp.UserAgent(o.UserAgent))
	}
	opts = append(opts, chromedp.NoInheritEnv)
	for _, name := range inheritedEnv {
		if v, ok := os.LookupEnv(name); ok {
			opts = append(opts, chromedp.Env(name+"="+v))
		}
	}
	var output syncBuffer
	opts = append(opts, chromedp.CombinedOutput(&output), chromedp.ModifyCmdFunc(ownGroup))

	allocCtx, alloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	b := &browserProc{path: path, ctx: ctx, cancel: cancel, alloc: alloc}
	watchdog := time.AfterFunc(o.StartTimeout, cancel)
	version, err := chromedp.Run(ctx, func(ctx context.Context, _ *chromedp.Target) (string, error) {
		v, err := cdp.Call(ctx, chromedp.FromContext(ctx).Browser, browser.GetVersion, cdp.Empty{})
		return v.Product, err
	})
	stopped := watchdog.Stop()
	if c := chromedp.FromContext(ctx); c != nil && c.Browser != nil && c.Browser.Process() != nil {
		b.pid = c.Browser.Process().Pid
	}
	if err != nil {
		b.close()
		if !stopped {
			return nil, fmt.Errorf("no answer within %s", o.StartTimeout)
		}
		if line := firstLine(output.String()); line != "" {
			return nil, errors.New(line)
		}
		return nil, errors.New(firstLine(err.Error()))
	}
	b.version = version
	if err := b.setCookies(o); err != nil {
		b.close()
		return nil, fmt.Errorf("set the [request] cookies: %w", err)
	}
	return b, nil
}

// setCookies gives the browser the config's cookies for each allowed
// domain (and its subdomains), and for no other.
func (b *browserProc) setCookies(o *Options) error {
	if len(o.Cookies) == 0 {
		return nil
	}
	var params []*network.CookieParam
	for _, d := range o.CookieDomains {
		for _, c := range o.Cookies {
			params = append(params, &network.CookieParam{Name: c.Name, Value: c.Value, Domain: d, Path: "/"})
		}
	}
	ctx, cancel := context.WithTimeout(b.ctx, o.PingTimeout)
	defer cancel()
	_, err := cdp.Call(ctx, chromedp.FromContext(b.ctx).Browser, storage.SetCookies, storage.SetCookiesParams{Cookies: params})
	return err
}

// alive reports whether the connection to the browser stands: chromedp
// ends the context when the browser goes away.
func (b *browserProc) alive() bool { return b.ctx.Err() == nil && !b.closed.Load() }

// ping asks the browser for its version, waiting at most timeout: nil
// when it answers, context.DeadlineExceeded when it does not (hung), and
// another error when the connection to it is gone.
func (b *browserProc) ping(timeout time.Duration) error {
	if !b.alive() {
		return errGone
	}
	ctx, cancel := context.WithTimeout(b.ctx, timeout)
	defer cancel()
	_, err := cdp.Call(ctx, chromedp.FromContext(b.ctx).Browser, browser.GetVersion, cdp.Empty{})
	if err != nil && ctx.Err() != nil && b.ctx.Err() == nil {
		return context.DeadlineExceeded
	}
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: %w", errGone, err)
	}
	return err
}

// errGone is the error of a ping of a browser whose connection is gone.
var errGone = errors.New("the connection to the browser is gone")

// close kills the browser's process group, then lets chromedp reap the
// browser, remove its profile folder and end its goroutines.
func (b *browserProc) close() {
	b.once.Do(func() {
		b.closed.Store(true)
		killGroup(b.pid)
		b.cancel()
		b.alloc()
		// Whatever the browser started after the first kill.
		killGroup(b.pid)
	})
}

// exitError says how the browser ended, when chromedp knows.
func (b *browserProc) exitError(err error) string {
	if err == nil {
		return ""
	}
	s := err.Error()
	if i := strings.LastIndex(s, "signal: "); i >= 0 {
		return s[i:]
	}
	if i := strings.LastIndex(s, "exit status "); i >= 0 {
		return s[i:]
	}
	return ""
}

// firstLine is the first line of the browser's output that is not blank.
func firstLine(s string) string {
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" {
			return line
		}
	}
	return ""
}

// syncBuffer is a bytes.Buffer safe for the browser's output goroutine
// and the caller, bounded to its first 64 KiB.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if room := 64<<10 - b.buf.Len(); room > 0 {
		b.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
