package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/databrew/databrew-stage/config"
	"github.com/databrew/databrew-stage/internal/catalogsite"
	"github.com/databrew/databrew-stage/internal/cli"
	"github.com/databrew/databrew-stage/internal/testkit/schemacheck"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"databrew-stage": func() {
			env := cli.OSEnv()
			env.RunOptions = pauseAtPublishStep(os.Getenv(pauseEnv))
			env.CommitOptions = pauseAtCommitStep(os.Getenv(pauseEnv))
			os.Exit(cli.Main(os.Args[1:], env))
		},
	})
}

// defaultSite is the catalog every script starts with: 3 listing pages of
// 10 items, so a full crawl is 33 requests.
var defaultSite = catalogsite.Options{Items: 30, PerPage: 10}

// siteHolder serves whichever site a script installed last, so a script
// can swap the site (new options) without changing its address. With a
// gate token set, every page but robots.txt answers 403 unless the
// request carries "Authorization: Bearer <token>".
type siteHolder struct {
	cur  atomic.Pointer[catalogsite.Site]
	gate atomic.Pointer[string]
}

func (h *siteHolder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if tok := h.gate.Load(); tok != nil && r.URL.Path != "/robots.txt" && r.Header.Get("Authorization") != "Bearer "+*tok {
		http.Error(w, "a token is required", http.StatusForbidden)
		return
	}
	h.cur.Load().ServeHTTP(w, r)
}

type siteKey struct{}

// subprocessGORACE keeps the race detector's one-second pause at exit out of
// every databrew-stage subprocess when the tests run with -race.
func subprocessGORACE() string {
	return strings.TrimSpace(os.Getenv("GORACE") + " atexit_sleep_ms=0")
}

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Setup: func(env *testscript.Env) error {
			h := &siteHolder{}
			h.cur.Store(catalogsite.New(defaultSite))
			srv := httptest.NewServer(h)
			env.Defer(srv.Close)
			env.Setenv("SITE", srv.URL)
			env.Setenv("START", catalogsite.StartURL(srv.URL))
			env.Values[siteKey{}] = h
			env.Setenv("GORACE", subprocessGORACE())
			return nil
		},
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "gcs": // a binary built with -tags gcs
				return config.GCSBuilt, nil
			case "iceberg": // a binary built with -tags iceberg
				return config.IcebergBuilt, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"site":        cmdSite,
			"envsubst":    cmdEnvsubst,
			"jsonl":       cmdJSONL,
			"schemacheck": cmdSchemacheck,
			"pipes":       cmdPipes,
		},
	})
}

// cmdSite changes the script's catalog site, which runs in the test
// process while databrew-stage runs as a subprocess:
//
//	site new [items=N] [perpage=N] [latency=D]   replace the site (same URL)
//	site fault KIND [from=N] [to=N] [path=P] [status=N] [hang=D]
//	site clear                                   remove all faults
//	site price ID PRICE
//	site remove ID
//	site add N
//	site gate [TOKEN]                            403 without the bearer token; no TOKEN opens the site
func cmdSite(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! site")
	}
	if len(args) == 0 {
		ts.Fatalf("usage: site new|fault|clear|price|remove|add|gate ...")
	}
	h := ts.Value(siteKey{}).(*siteHolder)
	site := h.cur.Load()
	kv := func(rest []string) map[string]string {
		m := map[string]string{}
		for _, a := range rest {
			k, v, ok := strings.Cut(a, "=")
			if !ok {
				ts.Fatalf("site %s: want key=value, got %q", args[0], a)
			}
			m[k] = v
		}
		return m
	}
	atoi := func(s string) int {
		n, err := strconv.Atoi(s)
		ts.Check(err)
		return n
	}
	dur := func(s string) time.Duration {
		d, err := time.ParseDuration(s)
		ts.Check(err)
		return d
	}
	switch cmd, rest := args[0], args[1:]; cmd {
	case "new":
		opts := defaultSite
		for k, v := range kv(rest) {
			switch k {
			case "items":
				opts.Items = atoi(v)
			case "perpage":
				opts.PerPage = atoi(v)
			case "latency":
				opts.Latency = dur(v)
			default:
				ts.Fatalf("site new: unknown option %q", k)
			}
		}
		h.cur.Store(catalogsite.New(opts))
	case "fault":
		if len(rest) == 0 {
			ts.Fatalf("usage: site fault KIND [from=N] [to=N] [path=P] [status=N] [hang=D]")
		}
		kind, ok := catalogsite.ParseFaultKind(rest[0])
		if !ok {
			ts.Fatalf("site fault: unknown kind %q", rest[0])
		}
		f := catalogsite.Fault{Kind: kind}
		for k, v := range kv(rest[1:]) {
			switch k {
			case "from":
				f.From = int64(atoi(v))
			case "to":
				f.To = int64(atoi(v))
			case "path":
				f.PathPrefix = v
			case "status":
				f.Status = atoi(v)
			case "hang":
				f.Hang = dur(v)
			default:
				ts.Fatalf("site fault: unknown option %q", k)
			}
		}
		site.AddFault(f)
	case "clear":
		site.ClearFaults()
	case "price":
		if len(rest) != 2 {
			ts.Fatalf("usage: site price ID PRICE")
		}
		p, err := strconv.ParseFloat(rest[1], 64)
		ts.Check(err)
		if !site.SetPrice(atoi(rest[0]), p) {
			ts.Fatalf("site price: no item %s", rest[0])
		}
	case "remove":
		if len(rest) != 1 || !site.Remove(atoi(rest[0])) {
			ts.Fatalf("site remove: want one visible item ID, got %q", rest)
		}
	case "add":
		if len(rest) != 1 {
			ts.Fatalf("usage: site add N")
		}
		site.Add(atoi(rest[0]))
	case "gate":
		switch len(rest) {
		case 0:
			h.gate.Store(nil)
		case 1:
			h.gate.Store(&rest[0])
		default:
			ts.Fatalf("usage: site gate [TOKEN]")
		}
	default:
		ts.Fatalf("site: unknown subcommand %q", cmd)
	}
}

// cmdEnvsubst expands $VAR and ${VAR} in files of the work directory,
// since testscript does not expand variables inside txtar files.
func cmdEnvsubst(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: envsubst FILE...")
	}
	for _, name := range args {
		path := ts.MkAbs(name)
		b, err := os.ReadFile(path)
		ts.Check(err)
		out := os.Expand(string(b), func(k string) string {
			v := ts.Getenv(k)
			if v == "" {
				ts.Fatalf("envsubst %s: $%s is not set", name, k)
			}
			return v
		})
		ts.Check(os.WriteFile(path, []byte(out), 0o644))
	}
}

// cmdJSONL checks JSON Lines (stdout, stderr or a file):
//
//	jsonl FILE count N                   exactly N lines, each a JSON object
//	jsonl FILE line I key=value...       fields of line I (1-based; -1 is the last)
//
// A key is a dotted path (requests.total, gaps.0.url); a value is compared with the
// field's JSON text, strings without quotes.
func cmdJSONL(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 3 {
		ts.Fatalf("usage: jsonl FILE count N | jsonl FILE line I key=value...")
	}
	lines := jsonLines(ts, args[0])
	var err error
	switch args[1] {
	case "count":
		if want := args[2]; strconv.Itoa(len(lines)) != want {
			err = fmt.Errorf("%s has %d JSON lines, want %s", args[0], len(lines), want)
		}
	case "line":
		i, perr := strconv.Atoi(args[2])
		ts.Check(perr)
		if i < 0 {
			i += len(lines) + 1
		}
		if i < 1 || i > len(lines) {
			ts.Fatalf("%s has %d JSON lines, no line %s", args[0], len(lines), args[2])
		}
		err = matchFields(lines[i-1], args[3:])
	default:
		ts.Fatalf("jsonl: unknown check %q", args[1])
	}
	switch {
	case err != nil && !neg:
		ts.Fatalf("%v", err)
	case err == nil && neg:
		ts.Fatalf("jsonl %s matched", strings.Join(args, " "))
	}
}

func jsonLines(ts *testscript.TestScript, name string) []map[string]any {
	var out []map[string]any
	for n, line := range strings.Split(ts.ReadFile(name), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			ts.Fatalf("%s line %d is not a JSON object: %v\n%s", name, n+1, err, line)
		}
		out = append(out, m)
	}
	return out
}

func matchFields(obj map[string]any, pairs []string) error {
	for _, p := range pairs {
		key, want, ok := strings.Cut(p, "=")
		if !ok {
			return fmt.Errorf("want key=value, got %q", p)
		}
		var v any = obj
		for _, part := range strings.Split(key, ".") {
			switch x := v.(type) {
			case map[string]any:
				if v, ok = x[part]; !ok {
					return fmt.Errorf("%s: no such field", key)
				}
			case []any:
				i, err := strconv.Atoi(part)
				if err != nil || i < 0 || i >= len(x) {
					return fmt.Errorf("%s: no element %q in a list of %d", key, part, len(x))
				}
				v = x[i]
			default:
				return fmt.Errorf("%s: cannot index %T with %q", key, v, part)
			}
		}
		got, _ := json.Marshal(v)
		if s, ok := v.(string); ok {
			got = []byte(s)
		}
		if string(got) != want {
			return fmt.Errorf("%s = %s, want %s", key, got, want)
		}
	}
	return nil
}

// cmdSchemacheck validates output against the published JSON Schemas:
//
//	schemacheck verdict|report FILE     FILE holds JSON Lines, at least one
//	schemacheck -doc verdict FILE       FILE holds one (indented) document
func cmdSchemacheck(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! schemacheck")
	}
	doc := len(args) > 0 && args[0] == "-doc"
	if doc {
		args = args[1:]
	}
	if len(args) != 2 {
		ts.Fatalf("usage: schemacheck [-doc] verdict|report FILE")
	}
	check := map[string]func([]byte) error{"verdict": schemacheck.Verdict, "report": schemacheck.Report}[args[0]]
	if check == nil {
		ts.Fatalf("schemacheck: unknown schema %q", args[0])
	}
	data := []byte(ts.ReadFile(args[1]))
	if doc {
		if err := check(data); err != nil {
			ts.Fatalf("%s: %v", args[1], err)
		}
		return
	}
	n, err := schemacheck.Lines(data, check)
	if err != nil {
		ts.Fatalf("%s: %v", args[1], err)
	}
	if n == 0 || bytes.Count(bytes.TrimSpace(data), []byte("\n"))+1 != n {
		ts.Fatalf("%s: %d JSON lines validated, want every line of a non-empty output", args[1], n)
	}
}
