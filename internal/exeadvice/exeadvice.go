// Package exeadvice advises the kernel to read the process's code (the
// executable, and the C library and loader when the binary links them)
// back page by page when memory runs short, rather than with the block
// device's read-ahead.
//
// Under a memory limit (a scheduler's cgroup) the kernel evicts code like
// any other file page and reads it back on the next fault, and on a file
// mapping it reads around the fault as much as the device's read_ahead_kb
// allows: 8 MiB on the machine the benchmarks ran on. The first 318
// seconds of the 1,000,000-item crawl under 64 MiB then read 299 GB,
// mostly of the binary, each read evicting the pages the next fault
// needed, and fetched 558 MB of pages; with the advice the same crawl
// fetched 600 MB in 84 seconds and 1,353 MB in 392 (see the 1M crawl in
// docs/architecture.md). bbolt gives the state file the same advice.
package exeadvice
