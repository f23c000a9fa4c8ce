package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// Load reads, decodes and validates the config file at path.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, Errors{{File: path, Msg: fmt.Sprintf("cannot read config: %v", unwrapPathError(err))}}
	}
	return Parse(path, data)
}

// Parse decodes and validates a config document; file names it in errors
// and anchors relative paths.
func Parse(file string, data []byte) (*Config, error) {
	raw := defaults()
	dec := toml.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return nil, decodeErrors(file, err, indexKeys(data))
	}
	v := &validator{file: file, keys: indexKeys(data)}
	for _, m := range v.keys.miscased {
		v.errorf(m.key, "unknown key (did you mean %q?)", m.want)
	}
	cfg := v.config(raw)
	if len(v.errs) > 0 {
		slices.SortStableFunc(v.errs, func(a, b *Error) int { return a.Line - b.Line })
		return nil, v.errs
	}
	return cfg, nil
}

// decodeErrors turns the TOML decoder's errors into located Errors.
func decodeErrors(file string, err error, keys *keyIndex) error {
	var strict *toml.StrictMissingError
	if errors.As(err, &strict) {
		out := make(Errors, 0, len(strict.Errors))
		for i := range strict.Errors {
			de := &strict.Errors[i]
			line, _ := de.Position()
			key := keys.complete(strings.Join(de.Key(), "."), line)
			out = append(out, &Error{File: file, Line: line, Key: key, Msg: "unknown key" + suggest(key)})
		}
		return out
	}
	var de *toml.DecodeError
	if errors.As(err, &de) {
		line, _ := de.Position()
		return Errors{{File: file, Line: line, Key: strings.Join(de.Key(), "."), Msg: strings.TrimPrefix(de.Error(), "toml: ")}}
	}
	return Errors{{File: file, Msg: strings.TrimPrefix(err.Error(), "toml: ")}}
}

func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
