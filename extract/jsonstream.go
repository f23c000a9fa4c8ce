package extract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/jmespath-community/go-jmespath/pkg/functions"
	"github.com/jmespath-community/go-jmespath/pkg/interpreter"
)

// jmesFunctions are JMESPath's functions, for expressions evaluated from
// their syntax tree (a stream plan's projection). The table is only read,
// so one serves every page.
var jmesFunctions = interpreter.NewFunctionCaller(functions.GetDefaultFunctions()...)

// jsonStream reads one JSON text a token at a time with encoding/json's
// Decoder, as streamPlan says (when it has a plan): each value the plan's
// expression yields is decoded on its own and given to each while the
// text is read, then let go; the values at the keep paths are decoded
// into a skeleton document that holds nothing else; every other value is
// only checked. The result is the one a tree of the whole document gives, for
// numbers, strings and duplicate names (the last one counts) alike.
type jsonStream struct {
	dec  *json.Decoder
	plan *streamPlan
	// numeric says the expression computes: the elements are evaluated
	// with float64 numbers (see jsonExpr).
	numeric bool
	keep    [][]string
	// each gets the values one by one; restart says that those it got so
	// far are void (a later duplicate name replaced them, or the
	// expression failed). Both are unused without a plan.
	each    func(v any)
	restart func()

	met    bool  // the plan's path is in the document (so far)
	found  bool  // and holds something other than null
	failed error // the expression failed on an element
	given  bool  // each has values that restart would void
}

// read reads body, one JSON value (after an optional UTF-8 byte order
// mark) and nothing but whitespace after it. It returns the skeleton and
// whether the expression yields anything other than null; an error means
// the body is not JSON.
func (s *jsonStream) read(body []byte) (skel any, found bool, err error) {
	s.dec = json.NewDecoder(bytes.NewReader(bytes.TrimPrefix(body, utf8BOM)))
	s.dec.UseNumber()
	if !s.dec.More() {
		if _, err := s.dec.Token(); err != nil && !errors.Is(err, io.EOF) {
			return nil, false, err
		}
		return nil, false, errors.New("empty document")
	}
	if skel, err = s.value(nil); err != nil {
		return nil, false, err
	}
	if _, err := s.dec.Token(); !errors.Is(err, io.EOF) {
		return nil, false, errors.New("more data after the JSON value")
	}
	return skel, s.met && s.found && s.failed == nil, nil
}

// value reads the value at path, the next in the text, and returns what
// the skeleton holds of it.
func (s *jsonStream) value(path []string) (any, error) {
	switch {
	case s.plan == nil:
	case slices.Equal(path, s.plan.path):
		return nil, s.target()
	case isPrefix(path, s.plan.path):
		s.replaced()
		return s.object(path)
	}
	switch {
	case s.keeps(path):
		return s.decode(room(path))
	case s.leadsToKept(path):
		return s.object(path)
	}
	return nil, s.skip(room(path))
}

// object reads a value on the way to the plan's path or to a kept one:
// an object's members, each at its own path, or else a value that holds
// nothing at any path below it (null stands for it in the skeleton).
func (s *jsonStream) object(path []string) (any, error) {
	tok, err := s.dec.Token()
	if err != nil || tok != json.Delim('{') {
		if tok == json.Delim('[') {
			err = s.skipRest('[', room(path)-1)
		}
		return nil, err
	}
	m := make(map[string]any)
	for s.dec.More() {
		key, err := s.dec.Token()
		if err != nil {
			return nil, err
		}
		name, _ := key.(string)
		v, err := s.value(append(slices.Clip(path), name))
		if err != nil {
			return nil, err
		}
		if v != nil {
			m[name] = v
		} else {
			delete(m, name) // a later duplicate name counts
		}
	}
	_, err = s.dec.Token()
	return m, err
}

// target reads the value at the plan's path: an array's elements one by
// one, or any other value whole.
func (s *jsonStream) target() error {
	s.replaced()
	s.met = true
	tok, err := s.dec.Token()
	if err != nil {
		return err
	}
	inner := room(s.plan.path) - 1
	switch tok {
	case json.Delim('['):
		s.found = true
		for s.dec.More() {
			if s.failed != nil {
				if err := s.dec.Decode(&checked{room: inner}); err != nil {
					return err
				}
				continue
			}
			v, err := s.decode(inner)
			if err != nil {
				return err
			}
			s.element(v)
		}
		_, err = s.dec.Token()
		return err
	case json.Delim('{'):
		if s.plan.project {
			return s.skipRest('{', inner)
		}
		m := make(map[string]any)
		for s.dec.More() {
			key, err := s.dec.Token()
			if err != nil {
				return err
			}
			v, err := s.decode(inner)
			if err != nil {
				return err
			}
			m[key.(string)] = v
		}
		if _, err := s.dec.Token(); err != nil {
			return err
		}
		tok = m
	}
	if tok != nil && !s.plan.project {
		s.found = true
		s.give(tok)
	}
	return nil
}

// element takes one element of the array at the plan's path.
func (s *jsonStream) element(v any) {
	switch {
	case !s.plan.project:
		s.give(v)
	case s.plan.flatten:
		if arr, ok := v.([]any); ok {
			for _, e := range arr {
				s.project(e)
			}
			return
		}
		fallthrough
	default:
		s.project(v)
	}
}

// project gives the projection's value on e, unless it is null.
func (s *jsonStream) project(e any) {
	if s.failed != nil {
		return
	}
	if s.plan.rhs != nil {
		var err error
		if e, err = s.eval(e); err != nil {
			s.failed = err
			s.void()
			return
		}
	}
	if e != nil {
		s.give(e)
	}
}

// eval evaluates the projection's expression on e.
func (s *jsonStream) eval(e any) (res any, err error) {
	switch {
	case !s.numeric:
	case s.plan.rhsKnown:
		e = floatsAt(e, s.plan.rhsReads)
	default:
		e = floatNumbers(e)
	}
	defer func() {
		if p := recover(); p != nil {
			res, err = nil, fmt.Errorf("JMESPath failed: %v", p)
		}
	}()
	return interpreter.NewInterpreter(e, jmesFunctions, nil).Execute(*s.plan.rhs, e)
}

func (s *jsonStream) give(v any) {
	s.given = true
	s.each(v)
}

// replaced starts the plan's path anew: a later member of the same name
// replaces what an earlier one held.
func (s *jsonStream) replaced() {
	s.met, s.found, s.failed = false, false, nil
	s.void()
}

// void voids the values given so far.
func (s *jsonStream) void() {
	if s.given {
		s.given = false
		s.restart()
	}
}

// keeps reports whether path is a kept path.
func (s *jsonStream) keeps(path []string) bool {
	return slices.ContainsFunc(s.keep, func(k []string) bool { return slices.Equal(k, path) })
}

// leadsToKept reports whether a kept path lies below path.
func (s *jsonStream) leadsToKept(path []string) bool {
	return slices.ContainsFunc(s.keep, func(k []string) bool { return isPrefix(path, k) })
}

// isPrefix reports whether p is a proper prefix of q.
func isPrefix(p, q []string) bool {
	return len(p) < len(q) && slices.Equal(p, q[:len(p)])
}

// maxDepth is how deeply encoding/json lets values nest in a document.
const maxDepth = 10000

var errDepth = errors.New("exceeded max depth")

// room is how deeply the value at path may nest: the document's limit
// less the objects around it.
func room(path []string) int { return maxDepth - len(path) }

// decode decodes the next value, which may nest room deep: a value
// decoded on its own must not pass the limit its place in the document
// sets. Only a value of at least 2 x room bytes can nest that deep.
func (s *jsonStream) decode(room int) (any, error) {
	start := s.dec.InputOffset()
	var v any
	if err := s.dec.Decode(&v); err != nil {
		return nil, err
	}
	if s.dec.InputOffset()-start >= int64(2*room) && nesting(v) > room {
		return nil, errDepth
	}
	return v, nil
}

// nesting is how deeply v nests: 0 for a string, number, boolean or
// null, 1 for an array or object of those, and so on.
func nesting(v any) int {
	n := 0
	switch v := v.(type) {
	case map[string]any:
		for _, e := range v {
			n = max(n, nesting(e))
		}
	case []any:
		for _, e := range v {
			n = max(n, nesting(e))
		}
	default:
		return 0
	}
	return n + 1
}

// skip reads the next value, which may nest room deep, only to check it.
// An object is read a member at a time and an array an element at a
// time, so a big value beside what is read costs no more than its
// largest element (the decoder holds a value it decodes whole).
func (s *jsonStream) skip(room int) error {
	tok, err := s.dec.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('['), json.Delim('{'):
		if room < 1 {
			return errDepth
		}
		return s.skipRest(tok.(json.Delim), room-1)
	}
	return nil
}

// skipRest checks the rest of an array or object whose opening delimiter
// was read; its values may nest room deep.
func (s *jsonStream) skipRest(open json.Delim, room int) error {
	for s.dec.More() {
		var err error
		if open == '[' {
			err = s.dec.Decode(&checked{room: room})
		} else if _, err = s.dec.Token(); err == nil {
			err = s.skip(room)
		}
		if err != nil {
			return err
		}
	}
	_, err := s.dec.Token()
	return err
}

// checked is a JSON value decoded only to check it: the decoder checks
// its syntax before handing it over, and checked how deeply it nests.
type checked struct{ room int }

// UnmarshalJSON keeps nothing; it fails when data nests deeper than
// room.
func (c *checked) UnmarshalJSON(data []byte) error {
	if len(data) < 2*c.room {
		return nil
	}
	depth, inString := 0, false
	for i := 0; i < len(data); i++ {
		switch b := data[i]; {
		case inString && b == '\\':
			i++
		case b == '"':
			inString = !inString
		case inString:
		case b == '[' || b == '{':
			if depth++; depth > c.room {
				return errDepth
			}
		case b == ']' || b == '}':
			depth--
		}
	}
	return nil
}
