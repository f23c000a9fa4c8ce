package extract

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/databrew/databrew-stage/internal/glob"
)

// mapping is a compiled FieldSpec.Map: keys normalised and lower-cased,
// patterns longest first.
type mapping struct {
	exact    map[string]mapped
	patterns []pattern // containing * or ?, longest first; "*" alone last
}

// pattern is one glob key of a mapping.
type pattern struct {
	glob string
	to   mapped
}

// mapped is what a map key turns the text into: a typed value, or a text
// that goes on through decimal and type.
type mapped struct {
	value  any
	text   string
	isText bool
}

// compileMap checks m's keys and values against fs and compiles it; each
// problem names the key at fault.
func compileMap(fs *FieldSpec, m map[string]any) (*mapping, []error) {
	mp := &mapping{exact: make(map[string]mapped, len(m))}
	var errs []error
	seen := make(map[string]string, len(m))
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys) // reports in a stable order
	for _, k := range keys {
		norm := strings.ToLower(normalize(k))
		if norm == "" {
			errs = append(errs, fmt.Errorf("key %q is empty: text that is empty finds nothing and is never mapped", k))
			continue
		}
		if prev, dup := seen[norm]; dup {
			errs = append(errs, fmt.Errorf("keys %q and %q are the same key: keys match case-insensitively", prev, k))
			continue
		}
		seen[norm] = k
		to, err := mapValue(fs, m[k])
		if err != nil {
			errs = append(errs, fmt.Errorf("%q: %w", k, err))
			continue
		}
		if strings.ContainsAny(norm, "*?") {
			mp.patterns = append(mp.patterns, pattern{glob: norm, to: to})
		} else {
			mp.exact[norm] = to
		}
	}
	slices.SortFunc(mp.patterns, func(a, b pattern) int {
		if la, lb := utf8.RuneCountInString(a.glob), utf8.RuneCountInString(b.glob); la != lb {
			return lb - la
		}
		return strings.Compare(a.glob, b.glob)
	})
	return mp, errs
}

// lookup returns what the normalised text s maps to.
func (mp *mapping) lookup(s string) (mapped, bool) {
	lower := strings.ToLower(s)
	if to, ok := mp.exact[lower]; ok {
		return to, true
	}
	for _, p := range mp.patterns {
		if globMatch(p.glob, lower) {
			return p.to, true
		}
	}
	return mapped{}, false
}

// globMatch reports whether s matches the pattern p, where * matches any
// run of characters and ? any one character.
func globMatch(p, s string) bool { return glob.Match(p, s) }

// mapValue checks a map value, or a default, against the field: a string
// is kept as text to be read as the field's type (and must read as one);
// a bool, an integer, a float or a time must suit the type as it is.
func mapValue(fs *FieldSpec, v any) (mapped, error) {
	if s, ok := v.(string); ok {
		if fs.Type != TypeString {
			if _, ok := parseText(fs, normalize(s)); !ok {
				return mapped{}, fmt.Errorf("%q is not %s", s, typeWords(fs))
			}
		}
		return mapped{text: normalize(s), isText: true}, nil
	}
	typed, err := typedValue(fs.Type, v)
	if err != nil {
		return mapped{}, err
	}
	return mapped{value: typed}, nil
}

// typedValue converts a TOML value other than a string to t.
func typedValue(t Type, v any) (any, error) {
	switch v := v.(type) {
	case bool:
		if t == TypeBool {
			return v, nil
		}
	case int64:
		switch t {
		case TypeInt64:
			return v, nil
		case TypeFloat64:
			return float64(v), nil
		}
	case float64:
		if t == TypeFloat64 && !math.IsInf(v, 0) && !math.IsNaN(v) {
			return v, nil
		}
	case time.Time:
		if t == TypeTimestamp {
			return v.UTC(), nil
		}
	case nil:
		return nil, errors.New("no value")
	}
	if t == TypeString {
		return nil, fmt.Errorf("%v is not a string: write it in quotes", v)
	}
	return nil, fmt.Errorf("%v is %s, not %s", v, tomlKind(v), typeArticle(t))
}

// typeArticle names t with its article: "an int64".
func typeArticle(t Type) string {
	if t == TypeInt64 {
		return "an int64"
	}
	return "a " + string(t)
}

// tomlKind names the kind of a decoded TOML value.
func tomlKind(v any) string {
	switch v.(type) {
	case bool:
		return "a boolean"
	case int64:
		return "an integer"
	case float64:
		return "a float"
	case string:
		return "a string"
	case time.Time:
		return "a date-time"
	}
	return fmt.Sprintf("%T", v)
}
