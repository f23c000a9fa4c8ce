package extract

import (
	"slices"

	"github.com/jmespath-community/go-jmespath/pkg/parsing"
)

// A listing API's page is mostly one array of product objects. An
// expression that only walks fields down to that array and then takes its
// elements, or a projection over them, can be read from the JSON text one
// element at a time (see jsonstream.go); these functions tell such
// expressions apart, and which parts of a document any other expression
// reads, from their syntax alone.

// streamPlan is a listing expression read one element at a time: path
// names an array by its fields from the root, and each element gives the
// expression's values on its own.
type streamPlan struct {
	path []string
	// project is true for path[*] and path[]: each element gives rhs's
	// value on it, null values left out, and a value at path that is not
	// an array gives null. Otherwise each element is a value as it is,
	// and a value at path that is not an array is the one value.
	project bool
	// flatten is true for path[]: an element that is an array gives each
	// of its elements instead.
	flatten bool
	// rhs is the projection's expression on each element; nil for the
	// element itself. rhsReads are the paths it reads within an element,
	// known when rhsKnown (see readPaths).
	rhs      *parsing.ASTNode
	rhsReads [][]string
	rhsKnown bool
}

// planStream returns how the expression n is read one element at a time:
// a.b, a.b[*], a.b[], a.b[*].rhs and a.b[].rhs, where a.b is any path of
// fields (or @) and rhs any expression that names neither the root ($)
// nor a variable.
// It returns nil for every other expression.
func planStream(n parsing.ASTNode) *streamPlan {
	if p, ok := fieldPath(n); ok {
		return &streamPlan{path: p}
	}
	var prefix []string
	if n.NodeType == parsing.ASTSubexpression {
		// a.b[*].c parses as a.(b[*].c).
		p, ok := fieldPath(n.Children[0])
		if !ok {
			return nil
		}
		prefix, n = p, n.Children[1]
	}
	if n.NodeType != parsing.ASTProjection {
		return nil
	}
	left, rhs := n.Children[0], n.Children[1]
	plan := &streamPlan{project: true}
	if left.NodeType == parsing.ASTFlatten {
		plan.flatten, left = true, left.Children[0]
	}
	p, ok := fieldPath(left)
	if !ok || !local(rhs) {
		return nil
	}
	plan.path = append(slices.Clip(prefix), p...)
	if rhs.NodeType != parsing.ASTIdentity {
		plan.rhs = &rhs
		plan.rhsReads, plan.rhsKnown = readPaths(rhs)
	}
	return plan
}

// fieldPath returns the fields of a path expression (a, a.b.c; @ is the
// empty path).
func fieldPath(n parsing.ASTNode) ([]string, bool) {
	switch n.NodeType {
	case parsing.ASTField:
		return []string{n.Value.(string)}, true
	case parsing.ASTCurrentNode, parsing.ASTIdentity:
		return []string{}, true
	case parsing.ASTSubexpression:
		a, ok := fieldPath(n.Children[0])
		if !ok {
			return nil, false
		}
		b, ok := fieldPath(n.Children[1])
		return append(a, b...), ok
	}
	return nil, false
}

// readPaths returns the paths of fields, from the root, whose values
// (each with all it holds) are all that the expression n, evaluated on the
// root, can read; false when that cannot be told from its syntax (it
// names the root or a variable, or walks down from a computed value in a
// way this does not follow).
func readPaths(n parsing.ASTNode) ([][]string, bool) {
	return readsAt(n, nil)
}

// readsAt is readPaths for n evaluated on the value at path at.
func readsAt(n parsing.ASTNode, at []string) ([][]string, bool) {
	here := func(p ...string) []string { return append(slices.Clip(at), p...) }
	switch n.NodeType {
	case parsing.ASTLiteral:
		return nil, true
	case parsing.ASTField:
		return [][]string{here(n.Value.(string))}, true
	case parsing.ASTCurrentNode, parsing.ASTIdentity, parsing.ASTIndex, parsing.ASTSlice:
		return [][]string{here()}, true
	case parsing.ASTSubexpression, parsing.ASTPipe, parsing.ASTIndexExpression:
		if p, ok := fieldPath(n.Children[0]); ok && len(n.Children) == 2 {
			return readsAt(n.Children[1], here(p...))
		}
		return readsWithin(n, at)
	case parsing.ASTProjection, parsing.ASTFlatten, parsing.ASTFilterProjection, parsing.ASTValueProjection:
		return readsWithin(n, at)
	case parsing.ASTAndExpression, parsing.ASTOrExpression, parsing.ASTNotExpression, parsing.ASTComparator,
		parsing.ASTArithmeticExpression, parsing.ASTArithmeticUnaryExpression, parsing.ASTMultiSelectList,
		parsing.ASTMultiSelectHash, parsing.ASTKeyValPair, parsing.ASTFunctionExpression:
		var all [][]string
		for _, c := range n.Children {
			if c.NodeType == parsing.ASTExpRef {
				// Evaluated on values a function gets from its
				// other arguments.
				if !local(c) {
					return nil, false
				}
				continue
			}
			paths, ok := readsAt(c, at)
			if !ok {
				return nil, false
			}
			all = append(all, paths...)
		}
		return all, true
	}
	return nil, false
}

// readsWithin is readsAt for a node whose first child gives a value the
// others are evaluated on (or within): they read only what that value
// holds, unless they name the root or a variable.
func readsWithin(n parsing.ASTNode, at []string) ([][]string, bool) {
	for _, c := range n.Children[1:] {
		if !local(c) {
			return nil, false
		}
	}
	return readsAt(n.Children[0], at)
}

// local reports whether n reads nothing but the value it is evaluated
// on: it names neither the root nor a variable.
func local(n parsing.ASTNode) bool {
	switch n.NodeType {
	case parsing.ASTRootNode, parsing.ASTVariable, parsing.ASTLetExpression:
		return false
	}
	return !slices.ContainsFunc(n.Children, func(c parsing.ASTNode) bool { return !local(c) })
}

// overlaps reports whether one of paths is p, holds it or lies within it.
func overlaps(paths [][]string, p []string) bool {
	for _, q := range paths {
		n := min(len(q), len(p))
		if slices.Equal(q[:n], p[:n]) {
			return true
		}
	}
	return false
}
