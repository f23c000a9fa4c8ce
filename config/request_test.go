package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/databrew/databrew-stage/internal/testkit/docs"
)

// secret is the token the tests read from the environment: it must never
// show in anything printed.
const secret = "s3cr3t-t0ken-4711"

// envOf is a Getenv over vars.
func envOf(vars map[string]string) Options {
	return Options{Getenv: func(name string) string { return vars[name] }}
}

const gated = good + `
[request]
headers = { Authorization = "Bearer ${SHOP_TOKEN}", "accept-language" = "de-DE" }
cookies = { cc_consent = "1", price = "$$5", session = "${SHOP_TOKEN}" }
`

func TestRequestReadsVariablesFromTheEnvironment(t *testing.T) {
	cfg, err := ParseWith("site.toml", []byte(gated), envOf(map[string]string{"SHOP_TOKEN": secret}))
	if err != nil {
		t.Fatal(err)
	}
	h := cfg.Request.Header()
	if got := h.Get("Authorization"); got != "Bearer "+secret {
		t.Fatalf("Authorization = %q, want the variable's value after Bearer", got)
	}
	if got := h["Accept-Language"]; len(got) != 1 || got[0] != "de-DE" || len(h) != 2 {
		t.Fatalf("headers = %v, want Accept-Language by its canonical name", h)
	}
	var cookies []string
	for _, c := range cfg.Request.HTTPCookies() {
		cookies = append(cookies, c.Name+"="+c.Value)
	}
	if got, want := strings.Join(cookies, " "), "cc_consent=1 price=$5 session="+secret; got != want {
		t.Fatalf("cookies = %q, want %q ($$ is a $)", got, want)
	}
	if !cfg.Request.CookieJar {
		t.Fatal("cookie_jar defaults to true")
	}
	off, err := Parse("site.toml", []byte(good+"[request]\ncookie_jar = false\n"))
	if err != nil || off.Request.CookieJar || len(off.Request.Headers)+len(off.Request.Cookies) != 0 {
		t.Fatalf("cookie_jar = false: %+v (%v)", off.Request, err)
	}
}

// TestLoadReadsTheProcessEnvironment: Load and Parse, which take no
// options, expand from the process environment.
func TestLoadReadsTheProcessEnvironment(t *testing.T) {
	t.Setenv("SHOP_TOKEN", secret)
	cfg, err := Parse("site.toml", []byte(gated))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Request.Header().Get("Authorization"); got != "Bearer "+secret {
		t.Fatalf("Authorization = %q", got)
	}
}

// TestRequestProblemsNameFileLineKeyNeverTheValue checks each kind of bad
// [request] value: the message names the file, the line and the key, and
// holds neither the value written nor a variable's value.
func TestRequestProblemsNameFileLineKeyNeverTheValue(t *testing.T) {
	env := map[string]string{"SHOP_TOKEN": secret, "BROKEN": secret + "\r\nX-Injected: 1", "QUOTED": secret + `"`}
	cases := []struct {
		name, table string
		key, msg    string
	}{
		{"unset variable", `headers = { Authorization = "Bearer ${NOPE}" }`, "request.headers.Authorization", "${NOPE} is not set"},
		{"unset variable in a cookie", `cookies = { session = "${NOPE}" }`, "request.cookies.session", "${NOPE} is not set"},
		{"unclosed ${", `headers = { Authorization = "Bearer ` + secret + `${SHOP_TOKEN" }`, "request.headers.Authorization", "not closed"},
		{"a $ alone", `headers = { Authorization = "` + secret + `$" }`, "request.headers.Authorization", "write $$ for a $"},
		{"$NAME without braces", `headers = { Authorization = "Bearer $SHOP_TOKEN" }`, "request.headers.Authorization", "must start ${NAME}"},
		{"empty ${}", `headers = { Authorization = "` + secret + `${}" }`, "request.headers.Authorization", "no valid variable name"},
		{"variable name with a digit first", `headers = { Authorization = "${1TOKEN}` + secret + `" }`, "request.headers.Authorization", "no valid variable name"},
		{"line break from a variable", `headers = { Authorization = "Bearer ${BROKEN}" }`, "request.headers.Authorization", "(from ${BROKEN}) is not a valid header value"},
		{"control character written", `headers = { X-Token = "` + secret + `\u0007" }`, "request.headers.X-Token", "not a valid header value"},
		{"bad header name", `headers = { "X Token" = "` + secret + `" }`, "request.headers.X Token", "not a valid header name"},
		{"Host", `headers = { host = "` + secret + `" }`, "request.headers.host", "may not set Host"},
		{"Content-Length", `headers = { Content-Length = "0" }`, "request.headers.Content-Length", "may not set Content-Length"},
		{"Cookie header", `headers = { Cookie = "a=` + secret + `" }`, "request.headers.Cookie", "request.cookies"},
		{"User-Agent", `headers = { User-Agent = "` + secret + `" }`, "request.headers.User-Agent", "policy.user_agent"},
		{"conditional header", `headers = { If-None-Match = "` + secret + `" }`, "request.headers.If-None-Match", "304"},
		{"header twice", `headers = { X-Token = "a", x-token = "` + secret + `" }`, "request.headers.x-token", "given twice"},
		{"bad cookie name", `cookies = { "a;b" = "` + secret + `" }`, "request.cookies.a;b", "not a valid cookie name"},
		{"quote from a variable in a cookie", `cookies = { session = "${QUOTED}" }`, "request.cookies.session", "(from ${QUOTED}) is not a valid cookie value"},
		{"semicolon in a cookie", `cookies = { session = "` + secret + `;x" }`, "request.cookies.session", "not a valid cookie value"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			doc := good + "\n[request]\n" + tc.table + "\n"
			line := 1 + strings.Count(good, "\n") + 2 // the table's one line
			_, err := ParseWith("site.toml", []byte(doc), envOf(env))
			if err == nil {
				t.Fatal("bad [request] accepted")
			}
			es := AsErrors(err)
			i := slices.IndexFunc(es, func(e *Error) bool { return e.Key == tc.key })
			if i < 0 {
				t.Fatalf("no problem names %q:\n%v", tc.key, err)
			}
			if e := es[i]; e.File != "site.toml" || e.Line != line || !strings.Contains(e.Msg, tc.msg) {
				t.Fatalf("problem = %q (line %d), want site.toml:%d: %s: ...%s...", e.Error(), e.Line, line, tc.key, tc.msg)
			}
			if strings.Contains(err.Error(), secret) || strings.Contains(fmt.Sprintf("%#v", err), secret) {
				t.Fatalf("the error shows a value: %v", err)
			}
		})
	}
}

// TestRequestKeyProblems: a misspelt key in [request] gets a suggestion,
// and a table form locates header problems on their own line.
func TestRequestKeyProblems(t *testing.T) {
	_, err := Parse("site.toml", []byte(good+"[request]\ncookie_jars = true\n"))
	if es := AsErrors(err); len(es) != 1 || es[0].Key != "request.cookie_jars" || !strings.Contains(es[0].Msg, `did you mean "cookie_jar"`) {
		t.Fatalf("misspelt key: %v", err)
	}
	doc := good + "[request.headers]\nAccept = \"text/html\"\nAuthorization = \"${NOPE}\"\n"
	_, err = ParseWith("site.toml", []byte(doc), envOf(nil))
	want := fmt.Sprintf("site.toml:%d: request.headers.Authorization: ${NOPE} is not set", strings.Count(good, "\n")+3)
	if es := AsErrors(err); len(es) != 1 || !strings.HasPrefix(es[0].Error(), want) {
		t.Fatalf("problem = %v, want %q", err, want)
	}
}

// TestSecretsNeverPrinted formats, encodes and logs a config holding a
// secret in every way a program or a test might: none shows the value.
func TestSecretsNeverPrinted(t *testing.T) {
	cfg, err := ParseWith("site.toml", []byte(gated), envOf(map[string]string{"SHOP_TOKEN": secret}))
	if err != nil {
		t.Fatal(err)
	}
	// holder keeps the config in an unexported field, where fmt does not
	// call a value's methods.
	type holder struct{ cfg Config }
	var out []string
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d"} {
		out = append(out,
			fmt.Sprintf(verb, cfg), fmt.Sprintf(verb, *cfg), fmt.Sprintf(verb, cfg.Request),
			fmt.Sprintf(verb, cfg.Request.Headers), fmt.Sprintf(verb, cfg.Request.Cookies["session"]),
			fmt.Sprintf(verb, holder{*cfg}), fmt.Sprintf(verb, &holder{*cfg}))
	}
	js, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, string(js))
	var logs bytes.Buffer
	for _, h := range []slog.Handler{slog.NewTextHandler(&logs, nil), slog.NewJSONHandler(&logs, nil)} {
		log := slog.New(h)
		log.Info("config", "config", cfg, "request", cfg.Request, "headers", cfg.Request.Headers, "token", cfg.Request.Headers["Authorization"])
	}
	out = append(out, logs.String())
	for _, s := range out {
		if strings.Contains(s, secret) || strings.Contains(s, fmt.Sprintf("%x", secret)) {
			t.Fatalf("a secret is printed: %s", s)
		}
	}
	// Each form says a value is there, and names its key.
	for _, c := range []struct{ got, want string }{
		{fmt.Sprintf("%+v", cfg.Request), "Authorization:[redacted]"},
		{fmt.Sprintf("%#v", cfg.Request), `"Authorization":[redacted]`},
		{string(js), `"Authorization":"[redacted]"`},
		{logs.String(), `"token":"[redacted]"`},
		{logs.String(), "token=[redacted]"},
	} {
		if !strings.Contains(c.got, c.want) {
			t.Fatalf("%s\nlacks %s", c.got, c.want)
		}
	}
	if got := (http.Header{"Authorization": {cfg.Request.Headers["Authorization"].Value()}}).Get("Authorization"); got != "Bearer "+secret {
		t.Fatalf("Value = %q", got)
	}
}

// TestREADMEGatedSitesSnippet: the [request] example of the documentation's
// Gated sites section (docs/config.md) parses, and its error example is the
// message an unset variable gets.
func TestREADMEGatedSitesSnippet(t *testing.T) {
	pages, err := docs.Pages("..")
	if err != nil {
		t.Fatal(err)
	}
	page, part, found := docs.Section(pages, "Gated sites")
	if !found {
		t.Fatal("no page of the documentation has a Gated sites section")
	}
	var snippet string
	for _, b := range (docs.Page{Path: page.Path, Text: part}).Blocks() {
		if b.Lang == "toml" {
			snippet = b.Text
			break
		}
	}
	if snippet == "" {
		t.Fatalf("%s has no toml block under Gated sites", page.Path)
	}
	cfg, err := ParseWith("books.toml", []byte(good+snippet), envOf(map[string]string{"SHOP_TOKEN": secret}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Request.Header().Get("Authorization") != "Bearer "+secret || len(cfg.Request.Cookies) != 1 || !cfg.Request.CookieJar {
		t.Fatalf("request = %+v", cfg.Request)
	}
	doc := strings.Repeat("\n", 25-strings.Count(good, "\n")) + snippet // [request] on line 26
	_, err = ParseWith("books.toml", []byte(good+doc), envOf(nil))
	if es := AsErrors(err); len(es) != 1 || !strings.Contains(part, "`"+es[0].Error()+"`") {
		t.Fatalf("the documentation's example error differs from the real one: %v", err)
	}
}
