package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/databrew/databrew-stage/bench/benchconfig"
	"github.com/databrew/databrew-stage/internal/gctune"
	"github.com/databrew/databrew-stage/stage"
	"github.com/databrew/databrew-stage/verdict"
)

// runEnv, set to a runRequest in JSON, makes the benchmark binary run the
// stage once and answer a runResult in JSON on stdout. Each run is a
// process of its own, as a scheduler starts the stage: it begins with an
// empty heap and none of the runs before it left anything behind, such
// as the encoders of the first run's export, which would raise the
// collector's goal for the reruns (and with it the fresh pages they
// touch, which cost about 12 µs each on the virtual machine this was
// written on).
const runEnv = "RERUNBENCH_RUN"

// runRequest is the run a child makes: the benchmark config's inputs, the
// clock's offset, and where to write a CPU profile and an allocation
// profile of the run, if anywhere.
type runRequest struct {
	StartURL    string        `json:"start_url"`
	Dir         string        `json:"dir"`
	Concurrency int           `json:"concurrency"`
	Extra       string        `json:"extra"`
	Offset      time.Duration `json:"offset"`
	CPUProfile  string        `json:"cpu_profile,omitempty"`
	MemProfile  string        `json:"mem_profile,omitempty"`
}

// runResult is the child's answer: stage.Run's wall and CPU seconds, the
// bytes it allocated on the heap (steadier than either) and the page
// faults it took (each a fresh page of memory, mostly the heap's),
// counted from its call to its return (the process's start and exit are
// not), its report, and its error.
type runResult struct {
	Seconds float64           `json:"seconds"`
	CPU     float64           `json:"cpu"`
	Faults  int64             `json:"faults"`
	Alloc   uint64            `json:"alloc"`
	Report  verdict.RunReport `json:"report"`
	Err     string            `json:"err,omitempty"`
}

// runChild makes the run req asks for and writes its result to stdout.
func runChild(req string) error {
	gctune.Apply()
	var rq runRequest
	if err := json.Unmarshal([]byte(req), &rq); err != nil {
		return fmt.Errorf("%s: %w", runEnv, err)
	}
	cfg, err := benchconfig.Parse(rq.StartURL, rq.Dir, rq.Concurrency, rq.Extra)
	if err != nil {
		return err
	}
	stage.AdviseHeap(cfg) // as the databrew-stage binary does
	if rq.CPUProfile != "" {
		f, err := os.Create(rq.CPUProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	if rq.MemProfile != "" {
		runtime.MemProfileRate = 4096
	}
	cpu0, faults0 := usage()
	alloc0 := allocated()
	t0 := time.Now()
	rep, runErr := stage.Run(context.Background(), *cfg, stage.Options{Clock: shiftedClock{off: rq.Offset}})
	secs := time.Since(t0).Seconds()
	cpu1, faults1 := usage()
	res := runResult{Seconds: secs, CPU: cpu1 - cpu0, Faults: faults1 - faults0, Alloc: allocated() - alloc0, Report: rep}
	if runErr != nil {
		res.Err = runErr.Error()
	}
	if rq.MemProfile != "" {
		if err := writeAllocs(rq.MemProfile); err != nil {
			return err
		}
	}
	return json.NewEncoder(os.Stdout).Encode(res)
}

// writeAllocs writes the allocation profile of the run to name, after a
// collection: the profile is as of the last one.
func writeAllocs(name string) error {
	runtime.GC()
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// runInChild makes the run rq in a new process of this binary. It
// returns the run's result and the process's wall seconds, from its start
// to its exit.
func runInChild(rq runRequest) (runResult, float64, error) {
	var res runResult
	self, err := os.Executable()
	if err != nil {
		return res, 0, err
	}
	b, err := json.Marshal(rq)
	if err != nil {
		return res, 0, err
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), runEnv+"="+string(b))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	t0 := time.Now()
	err = cmd.Run()
	secs := time.Since(t0).Seconds()
	if err != nil {
		return res, secs, fmt.Errorf("the stage's process: %w", err)
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		return res, secs, fmt.Errorf("the stage's process answered %q: %w", out.String(), err)
	}
	return res, secs, nil
}

// allocated returns the bytes the process allocated on the heap so far.
func allocated() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// usage returns the user and system CPU seconds this process has used
// and the page faults it has taken.
func usage() (cpu float64, faults int64) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds(), ru.Minflt + ru.Majflt
}
