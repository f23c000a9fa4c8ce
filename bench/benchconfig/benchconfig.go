// Package benchconfig is the config the benchmark programs run
// databrew-stage with: the bundled catalog's extraction (the SPEC
// example: key "upc", six fields), no delay, robots.txt respected, two
// retries, min_body_bytes 512, state and export under one folder.
package benchconfig

import (
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/databrew/databrew-stage/config"
	"github.com/databrew/databrew-stage/internal/catalogsite"
)

const configTOML = `name = "bench"
start_urls = [%s]
storage = %s
output = %s

[policy]
concurrency = %d
delay = "0s"
timeout = "30s"
retries = 2
min_body_bytes = 512
respect_robots = true
` + catalogsite.ExtractConfig

// Parse returns the benchmark config crawling from startURL at the given
// concurrency, with its state in dir/state, its export in dir/out, and
// extra TOML tables appended.
func Parse(startURL, dir string, concurrency int, extra string) (*config.Config, error) {
	doc := fmt.Sprintf(configTOML, strconv.Quote(startURL), strconv.Quote(filepath.Join(dir, "state")),
		strconv.Quote(filepath.Join(dir, "out")), concurrency) + extra
	return config.Parse(filepath.Join(dir, "bench.toml"), []byte(doc))
}
