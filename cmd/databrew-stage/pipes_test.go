package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/databrew/databrew-stage/internal/dagsterpipes"
)

// cmdPipes plays Dagster's part of the Pipes protocol in scripts:
//
//	pipes open ASSET[,ASSET...] [partition=KEY] [messages=FILE|stdout|stderr] [context=data|file|PATH]
//	    encodes a context (asset keys, partition key, run id, extras) and
//	    where messages go (default messages.jsonl) into the environment;
//	    context=PATH points the context parameters at PATH as it is
//	pipes close
//	    removes them
//	pipes methods FILE [-nolog] METHOD...
//	    the messages in FILE, each the protocol's envelope at version
//	    0.1, have exactly these methods in order (log messages left out
//	    with -nolog)
func cmdPipes(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) == 0 {
		ts.Fatalf("usage: pipes open|close|methods ...")
	}
	switch args[0] {
	case "open":
		if neg || len(args) < 2 {
			ts.Fatalf("usage: pipes open ASSET[,ASSET...] [partition=KEY] [messages=FILE|stdout|stderr] [context=data|file|PATH]")
		}
		pipesOpen(ts, args[1], args[2:])
	case "close":
		ts.Setenv(dagsterpipes.ContextEnv, "")
		ts.Setenv(dagsterpipes.MessagesEnv, "")
	case "methods":
		if len(args) < 2 {
			ts.Fatalf("usage: pipes methods FILE [-nolog] METHOD...")
		}
		err := pipesMethods(ts, args[1], args[2:])
		switch {
		case err != nil && !neg:
			ts.Fatalf("%v", err)
		case err == nil && neg:
			ts.Fatalf("pipes %s matched", strings.Join(args, " "))
		}
	default:
		ts.Fatalf("pipes: unknown command %q", args[0])
	}
}

func pipesOpen(ts *testscript.TestScript, assets string, opts []string) {
	context := map[string]any{
		"asset_keys": strings.Split(assets, ","), "partition_key": nil, "run_id": "dagster-run-1",
		"job_name": "__ASSET_JOB", "retry_number": 0, "extras": map[string]any{"caller": "script"},
		"code_version_by_asset_key": nil, "provenance_by_asset_key": nil,
		"partition_key_range": nil, "partition_time_window": nil,
	}
	messages := map[string]any{"path": ts.MkAbs("messages.jsonl")}
	asFile, ctxPath := false, ""
	for _, o := range opts {
		k, v, ok := strings.Cut(o, "=")
		if !ok {
			ts.Fatalf("pipes open: want key=value, got %q", o)
		}
		switch k {
		case "partition":
			context["partition_key"] = v
		case "messages":
			if v == "stdout" || v == "stderr" {
				messages = map[string]any{"stdio": v}
			} else {
				messages = map[string]any{"path": ts.MkAbs(v)}
			}
		case "context":
			switch v {
			case "data":
			case "file":
				asFile = true
			default:
				ctxPath = ts.MkAbs(v)
			}
		default:
			ts.Fatalf("pipes open: unknown option %q", k)
		}
	}
	ctxParams := map[string]any{"data": context}
	if ctxPath != "" {
		ctxParams = map[string]any{"path": ctxPath}
	}
	if asFile {
		path := filepath.Join(ts.Getenv("WORK"), "pipes-context.json")
		writeJSON(ts, path, context)
		ctxParams = map[string]any{"path": path}
	}
	for env, v := range map[string]any{dagsterpipes.ContextEnv: ctxParams, dagsterpipes.MessagesEnv: messages} {
		s, err := dagsterpipes.EncodeParam(v)
		ts.Check(err)
		ts.Setenv(env, s)
	}
}

func pipesMethods(ts *testscript.TestScript, file string, want []string) error {
	skipLogs := len(want) > 0 && want[0] == "-nolog"
	if skipLogs {
		want = want[1:]
	}
	var got []string
	for i, m := range jsonLines(ts, file) {
		if v := m["__dagster_pipes_version"]; v != dagsterpipes.ProtocolVersion {
			return fmt.Errorf("%s: message %d has version %v, want %s", file, i+1, v, dagsterpipes.ProtocolVersion)
		}
		if _, ok := m["params"]; !ok {
			return fmt.Errorf("%s: message %d has no params", file, i+1)
		}
		method, _ := m["method"].(string)
		if skipLogs && method == "log" {
			continue
		}
		got = append(got, method)
	}
	if !slices.Equal(got, want) {
		return fmt.Errorf("%s: methods %v, want %v", file, got, want)
	}
	return nil
}

// writeJSON writes v as JSON to path.
func writeJSON(ts *testscript.TestScript, path string, v any) {
	b, err := json.Marshal(v)
	ts.Check(err)
	ts.Check(os.WriteFile(path, b, 0o644))
}
