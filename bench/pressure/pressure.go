// Package pressure reads the machine's CPU pressure as Linux reports it in
// /proc/pressure/cpu, and measures what a page fault costs, so that a
// benchmark table says how loaded the machine was while it ran and how
// dear fresh memory was: on a virtual machine a fault can cost ten times
// what it does on another, and a short run's fresh memory is much of its
// time.
package pressure

import (
	"fmt"
	"os"
	"strings"
)

// File is where Linux reports CPU pressure (PSI).
const File = "/proc/pressure/cpu"

// CPU returns the "some" line of File, the share of time some runnable
// task waited for a CPU over the last 10 s, 60 s and 300 s, as "some
// avg10=1.20 avg60=0.80 avg300=0.30"; or why it could not be read.
func CPU() string {
	b, err := os.ReadFile(File)
	if err != nil {
		return fmt.Sprintf("unknown (%v)", err)
	}
	return Some(string(b))
}

// Some returns the averages of the "some" line of a PSI file's content,
// without its total; "unknown" when there is none.
func Some(content string) string {
	for _, line := range strings.Split(content, "\n") {
		if !strings.HasPrefix(line, "some ") {
			continue
		}
		var keep []string
		for _, f := range strings.Fields(line) {
			if !strings.HasPrefix(f, "total=") {
				keep = append(keep, f)
			}
		}
		return strings.Join(keep, " ")
	}
	return "unknown (no some line)"
}

// Line is the sentence a benchmark prints before and after its runs.
func Line(when string) string {
	return fmt.Sprintf("CPU pressure %s (%s): %s; %s", when, File, CPU(), FaultLine())
}

// faultPages is how many fresh pages FaultCost touches.
const faultPages = 4096

// hugeBytes is how much memory HugeFaultCost touches.
const hugeBytes = 16 << 20

// FaultLine says what a page fault costs now (see FaultCost), and what
// touching as much memory under MADV_HUGEPAGE costs (see HugeFaultCost),
// or why either could not be measured.
func FaultLine() string {
	line := "page fault cost unknown"
	if d, err := FaultCost(); err != nil {
		line += fmt.Sprintf(" (%v)", err)
	} else {
		line = fmt.Sprintf("a page fault took %.1f µs (%d fresh pages touched)", float64(d.Nanoseconds())/1e3, faultPages)
	}
	if d, err := HugeFaultCost(); err == nil {
		line += fmt.Sprintf(", %d MiB under MADV_HUGEPAGE %.1f ms", hugeBytes>>20, float64(d.Microseconds())/1e3)
	}
	return line
}
