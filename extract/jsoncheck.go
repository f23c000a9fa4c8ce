package extract

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/jmespath-community/go-jmespath/pkg/functions"
	"github.com/jmespath-community/go-jmespath/pkg/parsing"

	"github.com/databrew/databrew-stage/internal/closest"
)

// The bounds of a JMESPath expression. The library's parser and evaluator
// recurse once per level of nesting, and a stack overflow ends the whole
// process: the length bounds the parse, the depth every walk after it.
const (
	maxJSONExprBytes = 8 << 10
	maxJSONExprDepth = 128
)

// maxExprProblems bounds the problems one expression reports.
const maxExprProblems = 5

// jmespathFuncs is the function table expressions are evaluated with: the
// library's default functions (jmespath.Compile adds no others), by name.
var jmespathFuncs = func() map[string]functions.FunctionEntry {
	m := map[string]functions.FunctionEntry{}
	for _, f := range functions.GetDefaultFunctions() {
		m[f.Name] = f
	}
	return m
}()

// checkExpr finds what the parser accepts but no evaluation of ast can
// get past, so a config that says it fails when it loads, not with a NULL
// in every row: a function the table lacks, a call with too few or too
// many arguments, an argument the function never takes (an expression
// reference where it wants a value or the other way round, a literal of
// another type), a slice step of 0, a variable no let binds, and nesting
// deeper than maxJSONExprDepth.
func checkExpr(ast parsing.ASTNode) error {
	c := &exprChecker{}
	c.walk(ast, 1)
	if len(c.problems) == 0 {
		return nil
	}
	return c.problems
}

// exprProblems are the problems of one expression, on one line: a config
// error is one line.
type exprProblems []error

func (p exprProblems) Error() string {
	parts := make([]string, len(p))
	for i, e := range p {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "; ")
}

func (p exprProblems) Unwrap() []error { return p }

// exprChecker walks an expression's syntax tree.
type exprChecker struct {
	// bound are the variables the enclosing let expressions bind.
	bound    []string
	problems exprProblems
	tooDeep  bool
}

func (c *exprChecker) problem(format string, args ...any) {
	if len(c.problems) < maxExprProblems {
		c.problems = append(c.problems, fmt.Errorf(format, args...))
	}
}

func (c *exprChecker) walk(n parsing.ASTNode, depth int) {
	if depth > maxJSONExprDepth {
		if !c.tooDeep {
			c.tooDeep = true
			c.problem("nests deeper than %d levels; an expression may nest at most %d deep", maxJSONExprDepth, maxJSONExprDepth)
		}
		return
	}
	switch n.NodeType {
	case parsing.ASTFunctionExpression:
		c.call(n)
	case parsing.ASTSlice:
		if parts, ok := n.Value.([]*int); ok && len(parts) == 3 && parts[2] != nil && *parts[2] == 0 {
			c.problem("slice step 0: a slice's step must not be 0 (every other element is [::2], the reverse [::-1])")
		}
	case parsing.ASTVariable:
		if name, _ := n.Value.(string); !slices.Contains(c.bound, name) {
			c.problem("variable %s is not bound: bind it first, as in let %s = expression in ...", name, name)
		}
	case parsing.ASTLetExpression:
		c.let(n, depth)
		return
	}
	for _, child := range n.Children {
		c.walk(child, depth+1)
	}
}

// let checks a let expression: each binding's value sees only the
// variables bound around the let (as the library evaluates them), the
// body sees every binding too.
func (c *exprChecker) let(n parsing.ASTNode, depth int) {
	if len(n.Children) != 2 {
		c.problem("let: want let $name = expression in expression")
		return
	}
	outer := len(c.bound)
	var names []string
	for _, b := range n.Children[0].Children {
		if b.NodeType != parsing.ASTBinding || len(b.Children) != 2 || b.Children[0].NodeType != parsing.ASTVariable {
			c.problem("let: each binding is $name = expression")
			continue
		}
		c.walk(b.Children[1], depth+2)
		name, _ := b.Children[0].Value.(string)
		names = append(names, name)
	}
	c.bound = append(c.bound, names...)
	c.walk(n.Children[1], depth+1)
	c.bound = c.bound[:outer]
}

// call checks a function call against the function table.
func (c *exprChecker) call(n parsing.ASTNode) {
	name, _ := n.Value.(string)
	f, ok := jmespathFuncs[name]
	if !ok {
		c.problem("unknown function %s()%s", name, suggestFunc(name))
		return
	}
	if msg := arity(f.Arguments, len(n.Children)); msg != "" {
		c.problem("%s() %s", name, msg)
		return
	}
	for i, arg := range n.Children {
		spec := f.Arguments[min(i, len(f.Arguments)-1)]
		takesRef := slices.Contains(spec.Types, functions.JpExpref)
		switch {
		case arg.NodeType == parsing.ASTExpRef && !takesRef:
			c.problem("%s(): argument %d is an expression reference (&...), which it does not take; it takes %s", name, i+1, typeNames(spec.Types))
		case arg.NodeType != parsing.ASTExpRef && takesRef && len(spec.Types) == 1:
			c.problem("%s(): argument %d must be an expression reference, such as &%s", name, i+1, refExample(arg))
		case arg.NodeType == parsing.ASTLiteral && !literalFits(spec.Types, arg.Value):
			c.problem("%s(): argument %d is %s literal; it takes %s", name, i+1, literalKind(arg.Value), typeNames(spec.Types))
		}
	}
}

// arity says what is wrong with calling a function of these arguments
// with got of them, or "".
func arity(args []functions.ArgSpec, got int) string {
	least, variadic := 0, false
	for _, a := range args {
		if !a.Optional {
			least++
		}
		variadic = variadic || a.Variadic
	}
	most := len(args)
	switch {
	case variadic && got < least:
		return fmt.Sprintf("takes at least %s, got %d", plural(least, "argument"), got)
	case variadic:
		return ""
	case got >= least && got <= most:
		return ""
	case least == most:
		return fmt.Sprintf("takes %s, got %d", plural(least, "argument"), got)
	}
	return fmt.Sprintf("takes %d to %d arguments, got %d", least, most, got)
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// refExample is what an argument that must be an expression reference
// might have meant: the field it names, or "field".
func refExample(arg parsing.ASTNode) string {
	if s, ok := arg.Value.(string); ok && arg.NodeType == parsing.ASTField {
		return s
	}
	return "field"
}

// literalFits reports whether a literal argument passes the library's
// type check for one of types.
func literalFits(types []functions.JpType, v any) bool {
	for _, t := range types {
		switch t {
		case functions.JpAny:
			return true
		case functions.JpNumber:
			if _, ok := v.(float64); ok {
				return true
			}
		case functions.JpString:
			if _, ok := v.(string); ok {
				return true
			}
		case functions.JpObject:
			if _, ok := v.(map[string]any); ok {
				return true
			}
		case functions.JpArray, functions.JpArrayArray:
			if a, ok := v.([]any); ok && (t == functions.JpArray || allOf[[]any](a)) {
				return true
			}
		case functions.JpArrayNumber:
			if a, ok := v.([]any); ok && allOf[float64](a) {
				return true
			}
		case functions.JpArrayString:
			if a, ok := v.([]any); ok && allOf[string](a) {
				return true
			}
		}
	}
	return false
}

// allOf reports whether every element of a is a T.
func allOf[T any](a []any) bool {
	for _, e := range a {
		if _, ok := e.(T); !ok {
			return false
		}
	}
	return true
}

// literalKind names a literal's JSON type with its article.
func literalKind(v any) string {
	switch v.(type) {
	case nil:
		return "a null"
	case bool:
		return "a boolean"
	case float64:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return "a " + reflect.TypeOf(v).String()
}

// typeNames lists argument types in words: "a string, an array or an
// object".
func typeNames(types []functions.JpType) string {
	words := map[functions.JpType]string{
		functions.JpNumber: "a number", functions.JpString: "a string", functions.JpArray: "an array",
		functions.JpObject: "an object", functions.JpArrayArray: "an array of arrays", functions.JpArrayNumber: "an array of numbers",
		functions.JpArrayString: "an array of strings", functions.JpExpref: "an expression reference (&...)", functions.JpAny: "any value",
	}
	names := make([]string, 0, len(types))
	for _, t := range types {
		if w, ok := words[t]; ok {
			names = append(names, w)
		} else {
			names = append(names, string(t))
		}
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// suggestFunc returns " (did you mean f()?)" for the function name
// closest to name, when one is close.
func suggestFunc(name string) string {
	best := closest.Word(name, slices.Sorted(maps.Keys(jmespathFuncs)), 3)
	if best == "" {
		return ""
	}
	return " (did you mean " + best + "()?)"
}
