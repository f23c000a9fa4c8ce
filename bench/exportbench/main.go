// Command exportbench measures the export writer: it writes -rows rows of
// 8 user columns (plus the 6 system columns) through sink.FileSet, cycling
// through -distinct prebuilt rows so the figure is the writer's, and
// prints rows/s, CPU time, peak RSS (prebuilt rows included) and the
// files written. With -bin it also reports the stage binary's size and
// whether arrow-go's Parquet writer (pqarrow) is linked into it.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/databrew/databrew-stage/extract"
	"github.com/databrew/databrew-stage/sink"
)

func main() {
	rows := flag.Int("rows", 1_000_000, "rows to write")
	format := flag.String("format", "parquet", "parquet or arrow")
	groupRows := flag.Int("row-group-rows", 16384, "rows per row group (the stage's default)")
	bin := flag.String("bin", "", "stage binary to report the size of")
	distinct := flag.Int("distinct", 65536, "distinct prebuilt rows the writer cycles through (they count in the peak RSS)")
	flag.Parse()
	dir, err := os.MkdirTemp("", "exportbench")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(dir)
	schema := sink.NewSchema([]sink.Column{
		{Name: "title", Type: extract.TypeString, Required: true},
		{Name: "price", Type: extract.TypeFloat64, Required: true},
		{Name: "stock", Type: extract.TypeInt64},
		{Name: "upc", Type: extract.TypeString, Required: true},
		{Name: "tags", Type: extract.TypeString, List: true},
		{Name: "in_stock", Type: extract.TypeBool},
		{Name: "rating", Type: extract.TypeFloat64},
		{Name: "updated", Type: extract.TypeTimestamp},
	})
	fs, err := sink.NewFileSet(dir, schema, sink.Options{Format: sink.Format(*format), RowGroupRows: *groupRows,
		Metadata: map[string]string{"databrew.run_id": "bench"}})
	if err != nil {
		fail(err)
	}
	tags := [][]string{{"fiction"}, {"poetry", "classics"}, {"travel", "history", "maps"}}
	base := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	pool := make([]sink.Row, *distinct)
	for i := range pool {
		var rating any
		if i%7 != 0 {
			rating = float64(i%50) / 10
		}
		pool[i] = sink.Row{
			Key: "upc-" + strconv.Itoa(i), URL: "http://127.0.0.1:8390/catalogue/item-" + strconv.Itoa(i) + ".html",
			Change: []string{"new", "changed"}[i%2], RunID: "20261130T002305Z-3f9a", Hash: fmt.Sprintf("%032x", i*104729),
			FetchedAt: base.Add(time.Duration(i) * time.Millisecond),
			Values: []any{"Book " + strconv.Itoa(i) + ": A Light in the Attic", float64(i%6000) / 100, int64(i % 31), fmt.Sprintf("%016x", i*7919),
				tags[i%3], i%5 != 0, rating, base.Add(-time.Duration(i) * time.Second)},
		}
	}
	cpu0 := cpuTime()
	start := time.Now()
	for i := 0; i < *rows; i++ {
		if err := fs.Write(pool[i%len(pool)]); err != nil {
			fail(err)
		}
	}
	files, err := fs.Close()
	if err != nil {
		fail(err)
	}
	elapsed := time.Since(start)
	cpu := cpuTime() - cpu0
	var size int64
	for _, f := range files {
		size += f.Bytes
	}
	fmt.Printf("export %-7s %9d rows  %6.2fs  %8.0f rows/s  CPU %5.2fs  peak RSS %5.1f MiB  %d files, %.1f MiB\n",
		*format, *rows, elapsed.Seconds(), float64(*rows)/elapsed.Seconds(), cpu.Seconds(), peakRSSMiB(), len(files), float64(size)/(1<<20))
	if *bin != "" {
		reportBinary(*bin)
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// peakRSSMiB reads VmHWM, the process's peak resident memory.
func peakRSSMiB() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			kb, _ := strconv.Atoi(strings.Fields(line)[1])
			return float64(kb) / 1024
		}
	}
	return 0
}

func reportBinary(bin string) {
	st, err := os.Stat(bin)
	if err != nil {
		fail(err)
	}
	out, err := exec.Command("go", "tool", "nm", bin).Output()
	if err != nil {
		fail(fmt.Errorf("go tool nm %s: %w", bin, err))
	}
	pq := bytes.Count(out, []byte("parquet/pqarrow"))
	fmt.Printf("binary %s: %.1f MiB, %s, pqarrow symbols linked: %d\n", filepath.Base(bin), float64(st.Size())/(1<<20), runtime.Version(), pq)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "exportbench:", err)
	os.Exit(1)
}
