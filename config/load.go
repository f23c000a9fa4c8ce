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

// Options are what a config is read with besides its file.
type Options struct {
	// Getenv reads the environment variables that ${NAME} in [request]
	// values names; nil means os.Getenv.
	Getenv func(string) string
}

// Load reads, decodes and validates the config file at path, with the
// process environment.
func Load(path string) (*Config, error) { return LoadWith(path, Options{}) }

// LoadWith is Load with opts.
func LoadWith(path string, opts Options) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, Errors{{File: path, Msg: fmt.Sprintf("cannot read config: %v", unwrapPathError(err))}}
	}
	return ParseWith(path, data, opts)
}

// Parse decodes and validates a config document, with the process
// environment; file names it in errors and anchors relative paths.
func Parse(file string, data []byte) (*Config, error) { return ParseWith(file, data, Options{}) }

// ParseWith is Parse with opts.
func ParseWith(file string, data []byte, opts Options) (*Config, error) {
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	raw := defaults()
	dec := toml.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	v := &validator{file: file, keys: indexKeys(data), getenv: opts.Getenv}
	if err := dec.Decode(&raw); err != nil {
		var strict *toml.StrictMissingError
		if !errors.As(err, &strict) {
			return nil, decodeErrors(file, err, v.keys)
		}
		// Unknown keys: the rest of the file was decoded, and is checked
		// too, so every problem is reported at once.
		v.errs = append(v.errs, decodeErrors(file, err, v.keys).(Errors)...)
	}
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
