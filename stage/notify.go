package stage

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/databrew/databrew-stage/config"
	"github.com/databrew/databrew-stage/verdict"
)

// notifyOutputLimit bounds how much of a notify command's output is
// logged when it fails.
const notifyOutputLimit = 4096

// notify runs [notify].command after a run that failed, stopped for good
// on a stop rule, or raised an error, with the verdict JSON on stdin and the
// verdict's essentials in DATABREW_* variables, from the config file's
// folder. It is bounded by [notify].timeout; its failure is logged and
// never changes the verdict.
func notify(cfg config.Config, r verdict.RunReport, verdictJSON []byte, log *slog.Logger) {
	if cfg.Notify.Command == "" || !(r.Failed() || r.Stop.IsStopRule() || r.Stop == verdict.StopError) {
		return
	}
	// Not the run's context: a run stopped by its deadline still notifies.
	ctx, cancel := context.WithTimeout(context.Background(), cfg.Notify.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", cfg.Notify.Command)
	cmd.Dir = filepath.Dir(cfg.File)
	cmd.Stdin = bytes.NewReader(verdictJSON)
	cmd.Env = append(os.Environ(),
		"DATABREW_CONFIG="+r.Config, "DATABREW_RUN_ID="+r.RunID,
		"DATABREW_OUTCOME="+string(r.Outcome), "DATABREW_STOP="+string(r.Stop), "DATABREW_DETAIL="+r.Detail)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = time.Second
	start := time.Now()
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("timed out after %s", cfg.Notify.Timeout)
	}
	if err != nil {
		b := out.Bytes()
		if len(b) > notifyOutputLimit {
			b = b[:notifyOutputLimit]
		}
		log.Error("notify command failed", "command", cfg.Notify.Command, "err", err, "output", string(b))
		return
	}
	log.Info("notify command ran", "command", cfg.Notify.Command, "took", time.Since(start).Round(time.Millisecond))
}
