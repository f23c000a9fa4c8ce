package extract

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/jmespath-community/go-jmespath"
	"github.com/jmespath-community/go-jmespath/pkg/parsing"
)

// jsonExpr is a compiled JMESPath expression.
//
// Documents are decoded with numbers as json.Number, exact as written. A
// JMESPath implementation computes with float64 only, so an expression
// that compares, computes or calls a function runs on a copy of its input
// with float64 numbers; a plain path ("offers.price", "items[].url") runs
// on the exact document.
type jsonExpr struct {
	src     string
	jp      jmespath.JMESPath
	numeric bool
	// stream is how the expression is read one element at a time, nil
	// when it cannot be (see jsonplan.go); reads are the paths of what
	// it reads, known when readsKnown.
	stream     *streamPlan
	reads      [][]string
	readsKnown bool
}

// compileJSON compiles a JMESPath expression and checks it (see
// checkExpr): an expression that could never be evaluated is an error
// here, not a NULL at run time.
func compileJSON(src string) (*jsonExpr, error) {
	if strings.TrimSpace(src) == "" {
		return nil, errors.New("empty expression")
	}
	if len(src) > maxJSONExprBytes {
		return nil, fmt.Errorf("invalid JMESPath expression %s: it is %d bytes long; an expression may have at most %d",
			quoteExpr(src), len(src), maxJSONExprBytes)
	}
	ast, err := parseJSON(src)
	if err != nil {
		return nil, fmt.Errorf("invalid JMESPath expression %s: %w", quoteExpr(src), err)
	}
	if err := checkExpr(ast); err != nil {
		return nil, fmt.Errorf("invalid JMESPath expression %s: %w", quoteExpr(src), err)
	}
	jp, err := jmespath.Compile(src)
	if err != nil {
		return nil, fmt.Errorf("invalid JMESPath expression %s: %w", quoteExpr(src), err)
	}
	e := &jsonExpr{src: src, jp: jp, numeric: computes(ast), stream: planStream(ast)}
	e.reads, e.readsKnown = readPaths(ast)
	return e, nil
}

// quoteExpr quotes an expression for an error message, cut to its first
// 60 bytes when it is long.
func quoteExpr(src string) string {
	const keep = 60
	if len(src) <= keep+20 {
		return strconv.Quote(src)
	}
	cut := keep
	for cut > 0 && !utf8.RuneStart(src[cut]) {
		cut--
	}
	return strconv.Quote(src[:cut]) + "..."
}

// parseJSON parses an expression; a parser that panics on it is a syntax
// error too.
func parseJSON(src string) (ast parsing.ASTNode, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the parser failed on it: %v", p)
		}
	}()
	return jmespath.NewParser().Parse(src)
}

// computes reports whether the expression compares, computes or calls a
// function anywhere.
func computes(n parsing.ASTNode) bool {
	switch n.NodeType {
	case parsing.ASTComparator, parsing.ASTArithmeticExpression, parsing.ASTArithmeticUnaryExpression, parsing.ASTFunctionExpression:
		return true
	}
	for _, c := range n.Children {
		if computes(c) {
			return true
		}
	}
	return false
}

// floatCopies caches the float64 copies of the objects of one page. An
// entry holds its object, so no other object can take its address while
// the cache lives.
type floatCopies map[uintptr]floatCopy

type floatCopy struct {
	of   map[string]any
	copy any
}

// search evaluates the expression on v; floats caches the float64 copies
// of objects (see jsonExpr), made when first needed, for an expression
// whose reads are not known; one whose reads are known gets a copy of
// just what it reads.
func (e *jsonExpr) search(v any, floats *floatCopies) (res any, err error) {
	if e.numeric {
		if e.readsKnown {
			v = floatsAt(v, e.reads)
		} else {
			v = floats.of(v)
		}
	}
	defer func() {
		if p := recover(); p != nil {
			res, err = nil, fmt.Errorf("JMESPath %q failed: %v", e.src, p)
		}
	}()
	res, err = e.jp.Search(v)
	if err != nil {
		return nil, fmt.Errorf("JMESPath %q: %w", e.src, err)
	}
	return res, nil
}

// of returns v with float64 numbers, through the cache for objects.
func (c *floatCopies) of(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return floatNumbers(v)
	}
	key := reflect.ValueOf(m).Pointer()
	if fc, ok := (*c)[key]; ok {
		return fc.copy
	}
	if *c == nil {
		*c = make(floatCopies)
	}
	fc := floatCopy{of: m, copy: floatNumbers(m)}
	(*c)[key] = fc
	return fc.copy
}

// floatNumbers returns a copy of v with every json.Number a float64;
// numbers beyond float64's range stay as they are.
func floatNumbers(v any) any {
	switch v := v.(type) {
	case json.Number:
		if f, err := strconv.ParseFloat(string(v), 64); err == nil {
			return f
		}
		return v
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = floatNumbers(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = floatNumbers(e)
		}
		return out
	}
	return v
}

// floatsAt returns a copy of v with float64 numbers (as floatNumbers)
// that holds only the values at paths, and the objects on the way to
// them: an expression that reads nothing else (see readPaths) gives the
// same result on it as on a copy of the whole. Where a path meets a value
// that is not an object, the copy holds nothing, as a field of it is
// null.
func floatsAt(v any, paths [][]string) any {
	if slices.ContainsFunc(paths, func(p []string) bool { return len(p) == 0 }) {
		return floatNumbers(v)
	}
	m, ok := v.(map[string]any)
	if !ok || len(paths) == 0 {
		return nil
	}
	out := make(map[string]any, len(paths))
	for i, p := range paths {
		k := p[0]
		if _, done := out[k]; done || slices.ContainsFunc(paths[:i], func(q []string) bool { return q[0] == k }) {
			continue
		}
		child, ok := m[k]
		if !ok {
			continue
		}
		var below [][]string
		for _, q := range paths[i:] {
			if q[0] == k {
				below = append(below, q[1:])
			}
		}
		if c := floatsAt(child, below); c != nil {
			out[k] = c
		}
	}
	return out
}
