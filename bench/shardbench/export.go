package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/parquet-go/parquet-go"

	"github.com/databrew/databrew-stage/sink"
)

// readExport finds the one published run under out (its _SUCCESS written)
// and returns the rows its _manifest.json counts and the _key values its
// Parquet files hold, sorted.
func readExport(out string) (int64, []string, error) {
	runs, err := filepath.Glob(filepath.Join(out, "dt=*", "run=*", sink.SuccessFile))
	if err != nil {
		return 0, nil, err
	}
	if len(runs) != 1 {
		return 0, nil, fmt.Errorf("%s holds %d published runs, not 1: %q", out, len(runs), runs)
	}
	dir := filepath.Dir(runs[0])
	b, err := os.ReadFile(filepath.Join(dir, sink.ManifestFile))
	if err != nil {
		return 0, nil, err
	}
	var m sink.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return 0, nil, fmt.Errorf("%s: _manifest.json: %w", dir, err)
	}
	if len(m.Files) == 0 {
		return 0, nil, fmt.Errorf("%s: _manifest.json lists no file", dir)
	}
	var keys []string
	for _, f := range m.Files {
		k, err := readKeys(filepath.Join(dir, filepath.FromSlash(f.Name)))
		if err != nil {
			return 0, nil, err
		}
		keys = append(keys, k...)
	}
	slices.Sort(keys)
	return m.Rows, keys, nil
}

// readKeys returns the _key column of a Parquet file.
func readKeys(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := parquet.NewReader(f)
	defer r.Close()
	leaf, ok := r.Schema().Lookup("_key")
	if !ok {
		return nil, fmt.Errorf("%s: no _key column", path)
	}
	var keys []string
	rows := make([]parquet.Row, 256)
	for {
		n, err := r.ReadRows(rows)
		for _, row := range rows[:n] {
			for _, v := range row {
				if v.Column() == leaf.ColumnIndex {
					keys = append(keys, v.String())
				}
			}
		}
		if errors.Is(err, io.EOF) {
			return keys, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
}

// duplicate returns a value that occurs twice in sorted keys, or "".
func duplicate(keys []string) string {
	for i := 1; i < len(keys); i++ {
		if keys[i] == keys[i-1] {
			return keys[i]
		}
	}
	return ""
}
