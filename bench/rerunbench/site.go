package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/databrew/databrew-stage/internal/catalogsite"
)

// siteEnv, set to a catalog size, makes the benchmark binary serve the
// catalog site instead: the site runs in a process of its own, so its
// catalog (hundreds of MiB at 200,000 items) is not on the stage's heap,
// where it would keep the stage's garbage collector busy under the
// binary's soft memory limit as it never is in production.
const siteEnv = "RERUNBENCH_SITE_ITEMS"

// siteInfo is the child's first line: where it serves and how many items a
// listing page holds.
type siteInfo struct {
	URL     string `json:"url"`
	PerPage int    `json:"per_page"`
}

// serveSite serves a catalog of n items on loopback and answers commands,
// one per line on stdin, with one JSON line each on stdout: "reset" (the
// counts start over; answers true), "bytes" (the body bytes sent since),
// "step SEED" (the catalog's next version; answers its StepCounts). It
// returns when stdin closes.
func serveSite(n int) error {
	site := catalogsite.New(catalogsite.Options{Items: n})
	srv := httptest.NewServer(site)
	defer srv.Close()
	enc := json.NewEncoder(os.Stdout)
	if err := enc.Encode(siteInfo{URL: srv.URL, PerPage: site.Options().PerPage}); err != nil {
		return err
	}
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		cmd, arg, _ := strings.Cut(sc.Text(), " ")
		var answer any
		switch cmd {
		case "reset":
			site.ResetStats()
			answer = true
		case "bytes":
			answer = site.BytesSent()
		case "step":
			seed, err := strconv.ParseUint(arg, 10, 64)
			if err != nil {
				return fmt.Errorf("step %q: %w", arg, err)
			}
			answer = site.Step(seed)
		default:
			return fmt.Errorf("unknown command %q", sc.Text())
		}
		if err := enc.Encode(answer); err != nil {
			return err
		}
	}
	return sc.Err()
}

// siteProcess is the catalog site served by a child process.
type siteProcess struct {
	siteInfo
	cmd *exec.Cmd
	in  io.WriteCloser
	out *json.Decoder
}

// startSite starts a child process serving a catalog of n items.
func startSite(n int) (*siteProcess, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), siteEnv+"="+strconv.Itoa(n))
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the catalog site: %w", err)
	}
	p := &siteProcess{cmd: cmd, in: in, out: json.NewDecoder(out)}
	if err := p.out.Decode(&p.siteInfo); err != nil {
		p.close()
		return nil, fmt.Errorf("start the catalog site: %w", err)
	}
	return p, nil
}

// ask sends one command and decodes its answer into v.
func (p *siteProcess) ask(command string, v any) error {
	if _, err := fmt.Fprintln(p.in, command); err != nil {
		return fmt.Errorf("catalog site: %s: %w", command, err)
	}
	if err := p.out.Decode(v); err != nil {
		return fmt.Errorf("catalog site: %s: %w", command, err)
	}
	return nil
}

// close stops the child and waits for it.
func (p *siteProcess) close() {
	_ = p.in.Close()
	_ = p.cmd.Wait()
}
