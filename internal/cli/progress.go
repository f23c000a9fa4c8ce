package cli

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/databrew/databrew-stage/crawl"
)

// progress draws a live status line on stderr while a config runs.
type progress struct {
	enabled bool
	w       io.Writer
	bar     *progressbar.ProgressBar
}

func newProgress(mode string, w io.Writer) (*progress, error) {
	p := &progress{w: w}
	switch mode {
	case "never":
	case "always":
		p.enabled = true
	case "auto":
		f, ok := w.(*os.File)
		p.enabled = ok && term.IsTerminal(int(f.Fd()))
	default:
		return nil, fmt.Errorf("--progress must be auto, always or never, not %q", mode)
	}
	return p, nil
}

// start returns the callback the engine reports progress to, or nil.
func (p *progress) start(name string) func(crawl.Progress) {
	if !p.enabled {
		return nil
	}
	p.bar = progressbar.NewOptions64(-1,
		progressbar.OptionSetWriter(p.w),
		progressbar.OptionSetDescription(name),
		progressbar.OptionSpinnerType(14),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionSetItsString("req"),
		progressbar.OptionShowIts(),
		progressbar.OptionClearOnFinish(),
	)
	bar := p.bar
	return func(s crawl.Progress) {
		bar.Describe(fmt.Sprintf("%s: %d new · %d changed · %d failed · %d queued", name, s.New, s.Changed, s.Failed, s.Queued))
		_ = bar.Set64(int64(s.Requests))
	}
}

func (p *progress) stop() {
	if p.bar != nil {
		_ = p.bar.Finish()
		p.bar = nil
	}
}
