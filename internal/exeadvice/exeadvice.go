// Package exeadvice advises the kernel to read the process's own
// executable back page by page when memory runs short, rather than with
// the block device's read-ahead.
//
// Under a memory limit (a scheduler's cgroup) the kernel evicts the
// executable's code like any other file page and reads it back on the
// next fault, and on a file mapping it reads around the fault as much as
// the device's read_ahead_kb: 8 MiB on the machine the benchmarks ran on.
// The 1,000,000-item crawl under 64 MiB then read about 1 GB a second of
// its own binary, each read evicting the pages the next instruction needed,
// and crawled a quarter as fast as with the advice (see the 1M crawl in
// docs/architecture.md). bbolt gives its state file the same advice.
package exeadvice
