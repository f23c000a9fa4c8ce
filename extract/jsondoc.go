package extract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// ParseJSON decodes a JSON page once; the document can then be given to
// ListingJSON and ItemsJSON. Numbers are kept exact (json.Number) and
// strings decoded. An error means the body is not one JSON value.
func (x *Extractor) ParseJSON(body []byte) (any, error) {
	v, err := decodeJSON(body)
	if err != nil {
		return nil, fmt.Errorf("extract: parse json: %w", err)
	}
	return v, nil
}

var utf8BOM = []byte("\xef\xbb\xbf")

// decodeJSON decodes exactly one JSON value, with numbers as json.Number;
// only whitespace may follow it.
func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(bytes.TrimPrefix(b, utf8BOM)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("empty document")
		}
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("more data after the JSON value")
	}
	return v, nil
}

// decodeFirstJSON decodes the first JSON value of s, as script blocks
// hold it: surrounding whitespace, an HTML comment around it and anything
// after it are ignored.
func decodeFirstJSON(s string) (any, error) {
	s = strings.TrimSpace(s)
	if rest, ok := strings.CutPrefix(s, "<!--"); ok {
		s = strings.TrimSuffix(strings.TrimSpace(rest), "-->")
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// jsonText writes a JSON value as text: a string as it is, a number as
// written, true or false, and an object or array as compact JSON without
// HTML escapes.
func jsonText(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case json.Number:
		return string(v)
	case bool:
		return strconv.FormatBool(v)
	case float64:
		b, err := json.Marshal(v)
		if err != nil {
			return strconv.FormatFloat(v, 'g', -1, 64)
		}
		return string(b)
	case nil:
		return ""
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// jsonFloat returns a JSON number as a float64.
func jsonFloat(v any) (float64, bool) {
	switch v := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(v), 64)
		return f, err == nil && !math.IsInf(f, 0)
	case float64:
		return v, !math.IsInf(v, 0) && !math.IsNaN(v)
	}
	return 0, false
}

// jsonInt returns a JSON number as an int64 when it is a whole number
// within range ("12", "12.0", "1e3").
func jsonInt(v any) (int64, bool) {
	if n, ok := v.(json.Number); ok {
		if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
			return i, true
		}
	}
	f, ok := jsonFloat(v)
	if !ok || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, false
	}
	return int64(f), true
}
