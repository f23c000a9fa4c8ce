package stage

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/databrew/databrew-stage/config"
	"github.com/databrew/databrew-stage/objstore"
	"github.com/databrew/databrew-stage/publish"
	"github.com/databrew/databrew-stage/publish/folder"
	"github.com/databrew/databrew-stage/sink"
)

// openOutput opens the config's output as the publish protocol's
// Output: a local folder, or an output in object storage, which is
// proved usable first (bucket, credentials, permissions, create-only
// writes) unless preflight is false, so a bad output fails the run before
// any request is sent and before the state is touched. storeTimeout
// bounds each request to object storage (0: the default).
func openOutput(ctx context.Context, output string, storeTimeout time.Duration, preflight bool) (publish.Output, error) {
	if config.IsIceberg(output) {
		return publish.Output{}, fmt.Errorf("output %s: an Iceberg table is opened from its config's [iceberg] section", output)
	}
	if config.IsObjectStore(output) {
		return openObjectOutput(ctx, output, storeTimeout, preflight)
	}
	return openFolderOutput(output)
}

// openRunOutput opens cfg's output for a run: its table's, for an
// Iceberg output (see openTableOutput), else openOutput's.
func openRunOutput(ctx context.Context, cfg config.Config, opts Options) (publish.Output, error) {
	if cfg.Iceberg != nil {
		return openTableOutput(ctx, cfg, opts.getenv(), opts.StoreTimeout)
	}
	return openOutput(ctx, cfg.Output, opts.StoreTimeout, true)
}

// openObjectOutput opens an output in object storage.
func openObjectOutput(ctx context.Context, output string, storeTimeout time.Duration, preflight bool) (publish.Output, error) {
	t, err := objstore.OpenWith(ctx, output, objstore.Options{CallTimeout: storeTimeout})
	if err != nil {
		return publish.Output{}, err
	}
	if preflight {
		if err := t.Preflight(ctx); err != nil {
			_ = t.Close()
			return publish.Output{}, err
		}
	}
	return publish.Output{
		Storage: t.Storage(), Name: output, ID: t.ID(),
		Recorded: func(dir string) (string, bool) {
			key, ok := strings.CutPrefix(dir, t.Prefix())
			return key, ok && key != ""
		},
		Sweep: func(ctx context.Context, now time.Time, exclusive bool) (int, error) {
			if exclusive {
				// The caller holds the state after its own preflight: a
				// probe started before now is one a killed process left.
				return t.AbortProbes(ctx, now)
			}
			return t.AbortStaleProbes(ctx, now)
		},
		Runs: func(ctx context.Context) (int, error) {
			found, err := t.HasKey(ctx, t.Key("dt="), func(k string) bool {
				return strings.HasSuffix(k, "/"+sink.SuccessFile) && strings.Contains(k, "/run=")
			})
			if found {
				return 1, err
			}
			return 0, err
		},
		Close: t.Close,
	}, nil
}

// openFolderOutput opens a local (or shared) folder.
func openFolderOutput(output string) (publish.Output, error) {
	s, err := folder.Open(output)
	if err != nil {
		return publish.Output{}, err
	}
	root := s.Root()
	return publish.Output{
		Storage: s, Name: output, ID: root,
		Recorded: func(dir string) (string, bool) {
			// Only the run folder decides, not where the root was: a
			// state may have moved with its output.
			slash := filepath.ToSlash(dir)
			for _, mark := range []string{"/dt=", "/" + publish.ShardsFolder + "/"} {
				if i := strings.LastIndex(slash, mark); i >= 0 {
					return strings.TrimSuffix(slash[i+1:], "/"), true
				}
			}
			return "", false
		},
		Runs: func(context.Context) (int, error) {
			dirs, err := filepath.Glob(filepath.Join(root, "dt=*", "run=*"))
			return len(dirs), err
		},
		Tidy:  func() error { return folder.RemoveLegacyStaging(root) },
		Close: func() error { return nil },
	}, nil
}
