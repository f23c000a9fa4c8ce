package render

import (
	"sync/atomic"

	"github.com/databrew/databrew-stage/verdict"
)

// stats counts what the pages of a run did, across browser restarts.
type stats struct {
	rendered, timeouts                atomic.Int64
	subresources                      atomic.Int64
	blockedType, offDomain, robotsOut atomic.Int64
}

// facts are the counts as the verdict has them.
func (s *stats) facts() verdict.Render {
	return verdict.Render{
		Rendered: int(s.rendered.Load()),
		Timeouts: int(s.timeouts.Load()),
		Blocked: verdict.RenderBlocked{
			ResourceType: int(s.blockedType.Load()),
			OffDomain:    int(s.offDomain.Load()),
			Robots:       int(s.robotsOut.Load()),
		},
	}
}
