package extract

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// The value pipeline. A source yields text (an element's text or
// attribute, a JSON string) or a JSON value; text goes through regex, map,
// decimal and type, in that order. A JSON number or boolean keeps its type
// when the field's type takes it and no regex or map asks for text.

// parseText reads the normalised, non-empty text s as fs's type; string
// fields take it as it is.
func parseText(fs *FieldSpec, s string) (any, bool) {
	comma := fs.Decimal == DecimalComma
	switch fs.Type {
	case TypeInt64:
		if v, ok := readInt(s, comma); ok {
			return v, true
		}
	case TypeFloat64:
		if v, ok := readFloat(s, comma); ok {
			return v, true
		}
	case TypeBool:
		if v, ok := parseBool(s); ok {
			return v, true
		}
	case TypeTimestamp:
		if v, ok := parseTime(s, fs.Format); ok {
			return v, true
		}
	default:
		return s, true
	}
	return nil, false
}

// typed runs map, decimal and type on the text of one match; a text that
// does not parse is noted as f's first bad value.
func (r *reader) typed(f *field, s string) (any, bool) {
	if f.mapping != nil {
		if to, ok := f.mapping.lookup(s); ok {
			if !to.isText {
				return to.value, true
			}
			s = to.text
		}
	}
	if v, ok := r.convert(f, s); ok {
		return v, true
	}
	r.noteBad(f, s)
	return nil, false
}

// convert parses s as f's type; a string of a URL field is resolved.
func (r *reader) convert(f *field, s string) (any, bool) {
	if f.Type == TypeString {
		return r.str(f, s)
	}
	return parseText(&f.FieldSpec, s)
}

// str returns a string value, resolved against the base URL for URL fields.
func (r *reader) str(f *field, s string) (string, bool) {
	if !f.URL || s == "" {
		return s, true
	}
	u, err := resolve(r.base, s)
	if err != nil {
		return "", false
	}
	r.x.params.Strip(u)
	return u.String(), true
}

// regex cuts s by f's regex; false when it does not match.
func (r *reader) regex(f *field, s string) (string, bool) {
	if f.re == nil {
		return s, true
	}
	loc := f.re.FindStringSubmatchIndex(s)
	switch {
	case loc == nil || len(loc) >= 4 && loc[2] < 0:
		r.stats.regexMiss++
		return "", false
	case len(loc) >= 4:
		s = s[loc[2]:loc[3]]
	default:
		s = s[loc[0]:loc[1]]
	}
	s = strings.Trim(s, " ")
	return s, s != ""
}

// jsonScalar returns the first value res yields: res itself, or for an
// array the first element that yields one.
func (r *reader) jsonScalar(f *field, res any) (any, bool) {
	if arr, ok := res.([]any); ok {
		for _, e := range arr {
			if v, ok := r.jsonValue(f, e); ok {
				return v, true
			}
		}
		return nil, false
	}
	return r.jsonValue(f, res)
}

// jsonValue runs the pipeline on one JSON value: null and empty text find
// nothing; a number or boolean the field's type takes is kept as it is;
// anything else is read as text (an object or array as compact JSON).
func (r *reader) jsonValue(f *field, v any) (any, bool) {
	if v == nil {
		return nil, false
	}
	if f.re == nil && f.mapping == nil {
		switch f.Type {
		case TypeFloat64:
			if n, ok := jsonFloat(v); ok {
				return n, true
			}
		case TypeInt64:
			if n, ok := jsonInt(v); ok {
				return n, true
			}
		case TypeBool:
			if b, ok := v.(bool); ok {
				return b, true
			}
		}
	}
	s := jsonText(v)
	if _, isString := v.(string); isString {
		s = normalize(s)
	}
	if s == "" {
		return nil, false
	}
	s, ok := r.regex(f, s)
	if !ok {
		return nil, false
	}
	return r.typed(f, s)
}

// jsonList returns every value res yields, as f's typed list: the
// elements of an array, or res alone. present is false for an empty list.
func (r *reader) jsonList(f *field, res any) (v any, present bool) {
	vals, ok := res.([]any)
	if !ok && res != nil {
		vals = []any{res}
	}
	switch f.Type {
	case TypeInt64:
		l := collectJSON[int64](r, f, vals)
		return l, len(l) > 0
	case TypeFloat64:
		l := collectJSON[float64](r, f, vals)
		return l, len(l) > 0
	case TypeBool:
		l := collectJSON[bool](r, f, vals)
		return l, len(l) > 0
	case TypeTimestamp:
		l := collectJSON[time.Time](r, f, vals)
		return l, len(l) > 0
	default:
		l := collectJSON[string](r, f, vals)
		return l, len(l) > 0
	}
}

// collectJSON types every value of vals, skipping those that find nothing
// and recording those that do not parse.
func collectJSON[T any](r *reader, f *field, vals []any) []T {
	out := make([]T, 0, len(vals))
	for _, e := range vals {
		if v, ok := r.jsonValue(f, e); ok {
			out = append(out, v.(T))
		}
	}
	return out
}

// noteBad records a value of f that did not parse: each one of a list
// gets a reason; of a scalar, the first explains the field when nothing
// else yields a value.
func (r *reader) noteBad(f *field, s string) {
	r.stats.bad++
	if r.stats.typeErr++; r.stats.typeErr == 1 {
		r.badValue = cutText(s, maxBadValue)
	}
	switch {
	case f.Multiple:
		r.reasons = append(r.reasons, rejectReason(f, s))
	case r.stats.bad == 1:
		r.badReason = rejectReason(f, s)
	}
}

// noteProblem records a matched element of f whose content could not be
// read, as noteBad does for a value.
func (r *reader) noteProblem(f *field, reason string) {
	r.stats.bad++
	switch {
	case f.Multiple:
		r.reasons = append(r.reasons, reason)
	case r.stats.bad == 1:
		r.badReason = reason
	}
}

// rejectReason says why s is not a value of f.
func rejectReason(f *field, s string) string {
	const max = 64
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "..."
	}
	what := typeWords(&f.FieldSpec)
	if f.mapping != nil {
		what += " and matches no map key"
	}
	return fmt.Sprintf("%s: %q is not %s", f.Name, s, what)
}

// typeWords says what a value of fs must be: "a valid int64".
func typeWords(fs *FieldSpec) string {
	switch {
	case fs.Type == TypeString:
		return "a valid URL"
	case fs.Type == TypeTimestamp && fs.Format != "":
		return fmt.Sprintf("a timestamp in format %q", fs.Format)
	}
	return "a valid " + string(fs.Type)
}

// maxBadValue is how much of a value that did not parse a report keeps.
const maxBadValue = 120

// cutText cuts s to at most n bytes, at a rune boundary.
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
