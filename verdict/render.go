package verdict

// Render is what the browser did in a run with a [render] table: the
// facts `--json` adds beside the counts of requests.
type Render struct {
	// Pages says which page kinds were rendered: "listing", "item" or
	// "all", as the config wrote it.
	Pages string `json:"pages"`
	// Browser is the browser's product and version as it reported them
	// (such as "HeadlessChrome/156.0.8078.114"); empty when it never
	// started.
	Browser string `json:"browser"`
	// Rendered counts the page loads whose DOM was read.
	Rendered int `json:"rendered"`
	// Timeouts counts page loads that did not render within the policy's
	// timeout ("render timeout"): failures, like any timeout.
	Timeouts int `json:"timeouts"`
	// Restarts counts restarts of a browser that crashed or hung (at most
	// one: the next crash stops the run).
	Restarts int `json:"restarts"`
	// Blocked counts the requests pages asked for that never left the
	// browser, by why.
	Blocked RenderBlocked `json:"blocked"`
}

// RenderBlocked counts the requests of rendered pages the stage did not
// let out.
type RenderBlocked struct {
	// ResourceType counts requests of a type [render] block names.
	ResourceType int `json:"resource_type"`
	// OffDomain counts requests to hosts outside allowed_domains.
	OffDomain int `json:"off_domain"`
	// Robots counts requests robots.txt disallows.
	Robots int `json:"robots"`
}

// addRender adds a shard's render facts to the logical run's: counts add
// up; pages and the browser are the first shard's that has them.
func addRender(a, b *Render) *Render {
	if b == nil {
		return a
	}
	if a == nil {
		c := *b
		return &c
	}
	if a.Browser == "" {
		a.Browser = b.Browser
	}
	a.Rendered += b.Rendered
	a.Timeouts += b.Timeouts
	a.Restarts += b.Restarts
	a.Blocked.ResourceType += b.Blocked.ResourceType
	a.Blocked.OffDomain += b.Blocked.OffDomain
	a.Blocked.Robots += b.Blocked.Robots
	return a
}
