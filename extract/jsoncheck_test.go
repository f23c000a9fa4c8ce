package extract

import (
	"strings"
	"testing"
)

// TestJSONExprStaticProblems: what the JMESPath parser accepts but every
// evaluation would fail on — an unknown function, a wrong argument count,
// an argument of a kind the function never takes, a slice step of 0, a
// variable no let binds — is a compile error, naming the problem, not a
// NULL at run time.
func TestJSONExprStaticProblems(t *testing.T) {
	for _, tt := range []struct{ expr, want string }{
		{"lenght(items)", `unknown function lenght() (did you mean length()?)`},
		{"items[].frobnicate(@)", "unknown function frobnicate()"},
		{"length(a, b)", "length() takes 1 argument, got 2"},
		{"length()", "length() takes 1 argument, got 0"},
		{"join(', ')", "join() takes 2 arguments, got 1"},
		{"find_first(name)", "find_first() takes 2 to 4 arguments, got 1"},
		{"find_first(name, 'a', `1`, `2`, `3`)", "find_first() takes 2 to 4 arguments, got 5"},
		{"merge()", "merge() takes at least 1 argument, got 0"},
		{"zip()", "zip() takes at least 2 arguments, got 0"},
		{"zip(a)", "zip() takes at least 2 arguments, got 1"},
		{"not_null()", "not_null() takes at least 1 argument, got 0"},
		{"sort_by(items, price)", "sort_by(): argument 2 must be an expression reference, such as &price"},
		{"map(name, items)", "map(): argument 1 must be an expression reference"},
		{"length(&name)", "length(): argument 1 is an expression reference (&...), which it does not take"},
		{"abs('x')", "abs(): argument 1 is a string literal; it takes a number"},
		{"upper(`3`)", "upper(): argument 1 is a number literal; it takes a string"},
		{"length(`null`)", "length(): argument 1 is a null literal; it takes a string, an array or an object"},
		{"join(',', `[1, 2]`)", "join(): argument 2 is an array literal; it takes an array of strings"},
		{"items[::0]", "slice step 0"},
		{"name[1:5:0]", "slice step 0"},
		{"$price", "variable $price is not bound"},
		{"let $a = name in $b", "variable $b is not bound"},
		{"let $a = $a in $a", "variable $a is not bound"},
		{"items[?price > `1`].lenght(@) | sort_by(@, price)", "unknown function lenght()"},
	} {
		_, err := compileJSON(tt.expr)
		if err == nil {
			t.Errorf("compileJSON(%q) accepted; want %q", tt.expr, tt.want)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("compileJSON(%q) = %v; want it to say %q", tt.expr, err, tt.want)
		}
	}
}

// TestJSONExprStaticProblemsAllAtOnce: one expression with several
// problems names each of them.
func TestJSONExprStaticProblemsAllAtOnce(t *testing.T) {
	_, err := compileJSON("lenght(a) || length(a, b) || a[::0]")
	if err == nil {
		t.Fatal("accepted")
	}
	for _, want := range []string{"unknown function lenght()", "length() takes 1 argument, got 2", "slice step 0"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%v: does not say %q", err, want)
		}
	}
}

// TestJSONExprStaticChecksAcceptValidExpressions: the checks refuse
// nothing JMESPath can evaluate.
func TestJSONExprStaticChecksAcceptValidExpressions(t *testing.T) {
	for _, expr := range []string{
		"length(items)", "sort_by(items, &price)", "max_by(items, &price).name", "map(&name, items)",
		"items[::2]", "items[::-1]", "name[1:3]", "items[:2]", "merge(a, b, c)", "merge(a)", "not_null(a, b, `null`)",
		"zip(a, b)", "zip(a, b, c)", "find_first(name, 'a')", "find_first(name, 'a', `1`)", "find_first(name, 'a', `1`, `3`)",
		"join(', ', tags)", "join(', ', `[\"a\", \"b\"]`)", "contains(`[1, 2]`, `1`)", "contains('abc', 'b')",
		"to_number('12.5')", "to_string(`1`)", "type(`null`)", "length('abc')", "length(`{\"a\": 1}`)",
		"abs(`-1`)", "abs(price)", "let $p = price in items[?price > $p]", "let $a = x, $b = y in [$a, $b]",
		"items[*].let $n = name in {n: $n, m: sort_by(@.v, &w)}", "$.items[0]", "@", "`null`",
		"offers.price || offers[0].price || offers.lowPrice", "data.products.pageInfo.hasNextPage && data.products.pageInfo.endCursor",
		"items[?contains(tags, 'sale')] | length(@)", "sum(items[].price) / length(items)",
	} {
		if _, err := compileJSON(expr); err != nil {
			t.Errorf("compileJSON(%q): %v", expr, err)
		}
	}
}

// TestJSONExprHostileNesting: an expression nested thousands deep is
// refused as too long or too deep before it is parsed or evaluated,
// however it nests: the parser and the evaluator recurse once per level,
// and a million levels overflow the stack, which kills the process.
func TestJSONExprHostileNesting(t *testing.T) {
	for name, expr := range map[string]string{
		"10,000 parentheses":       strings.Repeat("(", 10000) + "a" + strings.Repeat(")", 10000),
		"10,000 negations":         strings.Repeat("!", 10000) + "a",
		"10,000 lists":             strings.Repeat("[", 10000) + "a" + strings.Repeat("]", 10000),
		"10,000 calls":             strings.Repeat("abs(", 10000) + "a" + strings.Repeat(")", 10000),
		"1,000,000 parentheses":    strings.Repeat("(", 1_000_000) + "a" + strings.Repeat(")", 1_000_000),
		"1,500 projections":        "a" + strings.Repeat("[*].a", 1500),
		"1,000 nested hashes":      strings.Repeat("{a: ", 1000) + "a" + strings.Repeat("}", 1000),
		"500 nested lets":          strings.Repeat("let $a = a in ", 500) + "$a",
		"a deep chain of pipes":    "a" + strings.Repeat(" | !a", 1000),
		"an or of 1,500 branches":  "a" + strings.Repeat(" || a", 1500),
		"a string literal too big": "'" + strings.Repeat("x", 20000) + "'",
	} {
		_, err := compileJSON(expr)
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, "at most") || len(msg) > 400 {
			t.Errorf("%s: %.400s; want a short message naming the limit", name, msg)
		}
	}
	// Just within the limits: accepted.
	for name, expr := range map[string]string{
		"100 parentheses": strings.Repeat("(", 100) + "a" + strings.Repeat(")", 100),
		"a long or":       "a" + strings.Repeat(" || a", 100),
		"a long path":     "a" + strings.Repeat(".a", 100),
	} {
		if _, err := compileJSON(expr); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
