package shopsites

import "testing"

func TestJSLiteralWritesAnObjectLiteralNotJSON(t *testing.T) {
	for _, c := range []struct {
		in   any
		want string
	}{
		{map[string]any{"b": 1, "a-b": "x/y", "_k$1": []any{nil, jsUndefined{}, true, 2.5, int64(-3)}},
			`{_k$1:[null,undefined,true,2.5,-3,],'a-b':'x\u002Fy',b:1,}`},
		{"L'Atelier <b>\\\n\u2028", `'L\'Atelier \u003Cb>\\\n\u2028'`},
		{[]string{"Wohnen", "Küche"}, `['Wohnen','Küche',]`},
		{map[string]any{}, `{}`},
		{[]any{}, `[]`},
		{map[string]any{"1a": 0, "": 0}, `{'':0,'1a':0,}`},
	} {
		if got := jsLiteral(c.in); got != c.want {
			t.Errorf("jsLiteral(%#v) = %s, want %s", c.in, got, c.want)
		}
	}
}
