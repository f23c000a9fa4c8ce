package htmltree

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// sameTree returns "" when the two trees hold the same nodes in the same
// places (type, name, namespace, attributes in order, text), or else
// where they first differ.
func sameTree(got, want *html.Node) string {
	return sameNode(got, want, "")
}

func sameNode(got, want *html.Node, path string) string {
	here := path + "/" + describe(want)
	if got.Type != want.Type || got.DataAtom != want.DataAtom || got.Data != want.Data || got.Namespace != want.Namespace {
		return fmt.Sprintf("%s: got %s", here, describe(got))
	}
	if len(got.Attr) != len(want.Attr) {
		return fmt.Sprintf("%s: attributes %v, want %v", here, got.Attr, want.Attr)
	}
	for i := range got.Attr {
		if got.Attr[i] != want.Attr[i] {
			return fmt.Sprintf("%s: attributes %v, want %v", here, got.Attr, want.Attr)
		}
	}
	g, w := got.FirstChild, want.FirstChild
	for i := 0; g != nil || w != nil; i++ {
		switch {
		case g == nil:
			return fmt.Sprintf("%s: child %d missing, want %s", here, i, describe(w))
		case w == nil:
			return fmt.Sprintf("%s: child %d is %s, want none", here, i, describe(g))
		case g.Parent != got:
			return fmt.Sprintf("%s: child %d's parent is not its parent", here, i)
		}
		if d := sameNode(g, w, fmt.Sprintf("%s[%d]", here, i)); d != "" {
			return d
		}
		g, w = g.NextSibling, w.NextSibling
	}
	return ""
}

func describe(n *html.Node) string {
	switch n.Type {
	case html.ElementNode:
		return n.Data
	case html.TextNode:
		return fmt.Sprintf("text %q", n.Data)
	case html.CommentNode:
		return fmt.Sprintf("comment %q", n.Data)
	case html.DoctypeNode:
		return fmt.Sprintf("doctype %q", n.Data)
	case html.DocumentNode:
		return "document"
	}
	return fmt.Sprintf("node type %d", n.Type)
}

// check parses doc both ways and fails the test when Parse accepts it
// and the trees differ; it reports whether Parse accepted it.
func check(t testing.TB, doc string) bool {
	t.Helper()
	got, ok := Parse([]byte(doc))
	if !ok {
		return false
	}
	want, err := html.Parse(strings.NewReader(doc))
	if err != nil {
		t.Errorf("html.Parse(%q): %v, but Parse accepted it", doc, err)
		return true
	}
	if d := sameTree(got, want); d != "" {
		t.Errorf("Parse(%q) differs from html.Parse at %s", doc, d)
	}
	return true
}

// plain is a page as a catalog site writes it.
const plain = `<!DOCTYPE html>
<html lang="en-us">
<head>
<meta charset="utf-8">
<title>Book 1: Winter &amp; Orchard | Books</title>
<link rel="stylesheet" href="/static/css/styles.css">
<script type="application/ld+json">{"@type": "Product", "name": "A & B"}</script>
<style>p > a { color: red }</style>
</head>
<body class="default">
<!-- header -->
<header class="header"><div class="page_inner"><a href="/catalogue/page-1.html" class="b" id="a">Books</a> <small>We love being scraped!</small></div></header>
<ul class="breadcrumb"><li><a href="/">Home</a></li><li class="active">Book 1<ul><li>nested</li></ul></li></ul>
<article class="product_page">
<div class="item"><img src="../media/1.jpg" alt=""><br/></div>
<div class="product_main"><h1>Book 1</h1><p class="price_color">&pound;37.19</p><p class="instock availability">In stock (27 available)</p></div>
<pre>
first line kept, the newline before it not</pre>
<table class="table table-striped">
<tr><th>UPC</th><td>186c20d78dee527b</td></tr>
<tr><th>Price</th><td><b title="x" class="y">&pound;37.19</b></td></tr>
</table>
<table><thead><tr><th>a</th></tr></thead><tbody><tr><td><table><tr><td>inner</td></tr></table></td></tr></tbody></table>
<dl><dt>term</dt><dd>definition</dd></dl>
<form action="/cart"><input type="hidden" name="id" value="1"><button type="submit">Add</button><textarea>
notes</textarea></form>
<ul class="tags"><li>poetry</li><li>science</li></ul>
<custom-element data-x="1">custom</custom-element>
</article>
<script>if (a < b && c > d) { document.write("</div>") }</script>
<footer><p>Text with&nbsp;entities &lt;b&gt; and a CR
line</p></footer>
</body>
</html>
`

// plainOldStyle is plain markup in an older hand: upper case, unquoted
// and repeated attributes, references in attributes.
const plainOldStyle = `<!DOCTYPE html>
<HTML LANG=en><HEAD><TITLE>x</TITLE></HEAD>
<BODY CLASS="a" class="b">
<!-- a
multi-line comment -->
<DIV ID=main data-x='1' data-y=a/b/ hidden>text</DIV>
<a href="/p?a=1&amp;b=2&#38;c=&#x26;" title="&quot;q&quot; &lt;x&gt; &Eacute;lise &#233;" / rel=x>link</a>
<P>1 < 2 and 3 > 2 &copy; &amp</P>
<img src=x alt="" ALT="y"><br/>
</BODY>
</HTML>
`

// manyAttributes is a page whose tags' attributes fill several of the
// blocks they are kept in, some tags across two blocks.
func manyAttributes() string {
	var sb strings.Builder
	sb.WriteString("<!DOCTYPE html><html><head></head><body>")
	for i := range 60 {
		sb.WriteString("<span")
		for j := range i % 7 {
			fmt.Fprintf(&sb, ` a%d="%d"`, j, i)
		}
		sb.WriteString(">x</span><b z=1 a=2 m=3></b>")
	}
	sb.WriteString(`<div` + strings.Repeat(` data-x="1"`, 3) + strings.Repeat(` k=v`, 2))
	for j := range 150 {
		fmt.Fprintf(&sb, ` b%d=%d`, j, j)
	}
	sb.WriteString("></div></body></html>")
	return sb.String()
}

// TestParseTakesPlainPages: the pages the stage reads most are in the
// subset, so they take the short way, and the trees agree.
func TestParseTakesPlainPages(t *testing.T) {
	for _, doc := range []string{plain, strings.ReplaceAll(plain, "\n", "\r\n"), strings.TrimSuffix(plain, "</body>\n</html>\n"),
		plainOldStyle, strings.ReplaceAll(plainOldStyle, "\n", "\r\n"),
		"<!DOCTYPE html><html><head></head><body></body></html>", "<!doctype HTML><html><head></head><body>x",
		manyAttributes()} {
		if !check(t, doc) {
			t.Errorf("Parse rejected a plain page:\n%s", doc)
		}
	}
}

// TestParseLeavesRepairsToHTMLParse: documents html.Parse repairs are
// not in the subset.
func TestParseLeavesRepairsToHTMLParse(t *testing.T) {
	const head = "<!DOCTYPE html><html><head></head><body>"
	for _, doc := range []string{
		"<html><head></head><body></body></html>", // no doctype
		"<!DOCTYPE html><p>x",                     // implied html, head, body
		head + "<p>a<p>b",                         // a p closes a p
		head + "<p><div>x</div></p>",              // a div closes a p
		head + "<b><i>x</b></i>",                  // misnested formatting
		head + "<a href=1><a href=2>x</a></a>",    // an a closes an a
		head + "<table>text</table>",              // fostered text
		head + "<table><td>x</td></table>",        // implied tbody and tr
		head + "<ul><li>a<li>b</ul>",              // an li closes an li
		head + "<ul><li>a<li>b</li></li></ul>",
		head + "<dl><dd>a<dt>b</dt></dd></dl>",
		"<!DOCTYPE html>x<html><head></head><body></body></html>", // text before the html element
		"<!DOCTYPE html><html>x<head></head><body></body></html>",
		head + "<div></span></div>",                  // a stray end tag
		head + "<svg><circle/></svg>",                // foreign content
		head + "<select><option>a<option>b</select>", // select rules
		head + "</p>",                                 // </p> implies a p
		head + "<h1><h2>x</h2></h1>",                  // a heading closes a heading
		head + "<form><form></form></form>",           // a nested form is dropped
		"<!DOCTYPE html><html><head><title>x</title>", // a head that does not end
		"<!DOCTYPE html><html><head><div></div></head><body></body></html>",
		head + "x\x00y",
		head + `<a title="&notit;">x</a>`, // "¬it;" in text, as it is in an attribute
		head + `<a title="&amp">x</a>`,
	} {
		if check(t, doc) {
			t.Errorf("Parse accepted %q, which html.Parse repairs", doc)
		}
	}
}

// TestParseAgreesOnHTML5LibInputs: the tree construction tests' inputs,
// as they are and as the body of a plain document, which Parse accepts
// or leaves; where it accepts, the trees agree.
func TestParseAgreesOnHTML5LibInputs(t *testing.T) {
	b, err := os.ReadFile("testdata/html5lib.json")
	if err != nil {
		t.Fatal(err)
	}
	var inputs []string
	if err := json.Unmarshal(b, &inputs); err != nil {
		t.Fatal(err)
	}
	accepted := 0
	for _, in := range inputs {
		for _, doc := range []string{in, "<!DOCTYPE html><html><head></head><body>" + in,
			"<!DOCTYPE html><html><head></head><body>" + in + "</body></html>",
			"<!DOCTYPE html><html><head>" + in + "</head><body></body></html>"} {
			if check(t, doc) {
				accepted++
			}
		}
	}
	t.Logf("%d of %d documents in the subset", accepted, 4*len(inputs))
	if accepted < 300 {
		t.Errorf("only %d documents in the subset: the test no longer compares much", accepted)
	}
}

// TestParseAgreesOnGeneratedDocuments: documents built from pieces of
// plain and broken markup at random, most of them in the subset.
func TestParseAgreesOnGeneratedDocuments(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	const n = 20000
	accepted := 0
	for i := range n {
		doc := generate(rng)
		if i%2 == 0 {
			doc = generatePlain(rng)
		}
		if check(t, doc) {
			accepted++
		}
		if t.Failed() {
			return
		}
	}
	t.Logf("%d of %d documents in the subset", accepted, n)
	if accepted < n/2 {
		t.Errorf("only %d of %d documents in the subset", accepted, n)
	}
}

// generate writes a random document: a doctype, head and body most of
// the time, elements nested and closed most of the time.
func generate(rng *rand.Rand) string {
	var sb strings.Builder
	pick := func(s ...string) string { return s[rng.IntN(len(s))] }
	if rng.IntN(20) > 0 {
		sb.WriteString(pick("<!DOCTYPE html>", "<!doctype html>\n", "<!DOCTYPE html><!-- c -->", "<!DOCTYPE html PUBLIC \"x\">"))
	}
	sb.WriteString(pick("<html>", "<html lang=en>\n", "\n<html>", ""))
	sb.WriteString(pick("<head>", "<head>\n", " <head>", ""))
	for range rng.IntN(4) {
		sb.WriteString(pick(`<meta charset="utf-8">`, "<title>a &amp; b</title>", "<link rel=x href=y>", "\n",
			"<script>var a = 1 < 2;</script>", "<style>a{}</style>", "<!-- h -->", "<noscript><p>x</p></noscript>", "<base href=/>", "x"))
	}
	sb.WriteString(pick("</head>", "</head>\n", "</head> <!-- -->", ""))
	sb.WriteString(pick("<body>", "<body class=a>", "\n<body>\n", ""))
	var open []string
	for range rng.IntN(40) {
		switch r := rng.IntN(10); {
		case r < 4 && len(open) < 12:
			tag := pick("div", "p", "span", "ul", "li", "ol", "dl", "dt", "dd", "table", "tbody", "thead", "tr", "td", "th",
				"a", "b", "i", "em", "strong", "font", "nobr", "h1", "h2", "pre", "textarea", "form", "button", "section",
				"article", "header", "footer", "nav", "label", "custom-el", "object", "select", "option", "svg", "caption", "xmp", "iframe", "script")
			sb.WriteString("<" + tag + pick("", ` class="x"`, ` id=y class=z`, ` href="/a?b=1&amp;c=2"`, ` b="2" a="1"`, " /") + ">")
			if tag == "textarea" || tag == "xmp" || tag == "iframe" || tag == "script" || tag == "pre" {
				sb.WriteString(pick("\nx", "y", "\r\nz", "</p>"))
			}
			open = append(open, tag)
		case r < 7 && len(open) > 0:
			i := len(open) - 1
			if rng.IntN(12) == 0 {
				i = rng.IntN(len(open)) // misnested
			}
			if rng.IntN(15) > 0 {
				sb.WriteString("</" + open[i] + ">")
			}
			open = append(open[:i], open[i+1:]...)
		case r < 9:
			sb.WriteString(pick("text", " ", "\n", "a &amp; b", "&lt;", "x\r\ny", "\t", "caf\u00e9", "1 < 2", "&nbsp;", "&notanentity;"))
		default:
			sb.WriteString(pick("<br>", "<img src=x>", "<hr>", "<input type=hidden>", "<!-- c -->", "<wbr/>", "</br>", "<image>", "</div>"))
		}
	}
	for i := len(open) - 1; i >= 0; i-- {
		if rng.IntN(10) > 0 {
			sb.WriteString("</" + open[i] + ">")
		}
	}
	sb.WriteString(pick("</body></html>", "</body>\n</html>\n", "</body>", "", "</body><!-- after -->\n</html>\n<!-- end -->", "</html> "))
	return sb.String()
}

// generatePlain writes a random document of the kind Parse is for:
// elements nested as their content models allow, every one closed.
func generatePlain(rng *rand.Rand) string {
	var sb strings.Builder
	pick := func(s ...string) string { return s[rng.IntN(len(s))] }
	attrs := func() string {
		return pick("", ` class="x"`, ` id=y class=z`, ` href="/a?b=1&amp;c=2"`, ` b="2" a="1"`, ` data-v='&lt;'`)
	}
	var inline, flow func(depth int)
	inline = func(depth int) {
		for range rng.IntN(4) {
			switch rng.IntN(6) {
			case 0, 1:
				sb.WriteString(pick("text", " ", "a &amp; b", "x\r\ny", "&nbsp;", "caf\u00e9", "1 < 2", "\n"))
			case 2:
				sb.WriteString(pick("<br>", "<img src=x alt=''>", "<input name=q>", "<!-- c -->", "<wbr>"))
			default:
				if depth > 0 {
					tag := pick("span", "b", "i", "em", "strong", "a", "small", "label", "code", "custom-el")
					sb.WriteString("<" + tag + attrs() + ">")
					inline(depth - 1)
					sb.WriteString("</" + tag + ">")
				}
			}
		}
	}
	flow = func(depth int) {
		for range rng.IntN(5) {
			sb.WriteString(pick("", "\n", " "))
			switch rng.IntN(8) {
			case 0:
				inline(depth)
			case 1:
				tag := pick("p", "h1", "h3", "pre", "button")
				sb.WriteString("<" + tag + attrs() + ">" + pick("", "\n"))
				inline(depth)
				sb.WriteString("</" + tag + ">")
			case 2:
				list := pick("ul", "ol")
				sb.WriteString("<" + list + attrs() + ">")
				for range rng.IntN(4) {
					sb.WriteString("<li" + attrs() + ">")
					if depth > 0 {
						flow(depth - 1)
					}
					sb.WriteString("</li>" + pick("", "\n"))
				}
				sb.WriteString("</" + list + ">")
			case 3:
				sb.WriteString("<table" + attrs() + ">" + pick("", "\n"))
				section := pick("", "tbody", "thead")
				if section != "" {
					sb.WriteString("<" + section + ">")
				}
				for range rng.IntN(3) {
					sb.WriteString("<tr>")
					for range rng.IntN(3) {
						cell := pick("td", "th")
						sb.WriteString("<" + cell + attrs() + ">")
						if depth > 0 {
							flow(depth - 1)
						}
						sb.WriteString("</" + cell + ">")
					}
					sb.WriteString("</tr>" + pick("", "\n"))
				}
				if section != "" {
					sb.WriteString("</" + section + ">")
				}
				sb.WriteString("</table>")
			case 4:
				sb.WriteString(pick("<hr>", "<script>if (a<b) x()</script>", "<textarea>\nnote</textarea>", "<dl><dt>t</dt><dd>d</dd></dl>", "<form><input></form>"))
			default:
				if depth > 0 {
					tag := pick("div", "section", "article", "header", "footer", "nav", "main", "aside", "blockquote")
					sb.WriteString("<" + tag + attrs() + ">")
					flow(depth - 1)
					sb.WriteString("</" + tag + ">")
				}
			}
		}
	}
	sb.WriteString("<!DOCTYPE html>\n<html" + attrs() + ">\n<head>\n<meta charset=\"utf-8\">\n<title>T &amp; c</title>\n</head>\n<body" + attrs() + ">\n")
	flow(4)
	sb.WriteString(pick("</body>\n</html>\n", "</body></html>", "", "</body>\n"))
	return sb.String()
}

// FuzzParse: whatever the document, Parse either leaves it or builds
// html.Parse's tree.
func FuzzParse(f *testing.F) {
	f.Add(plain)
	rng := rand.New(rand.NewPCG(1, 1))
	for range 50 {
		f.Add(generate(rng))
		f.Add(generatePlain(rng))
	}
	f.Fuzz(func(t *testing.T, doc string) {
		check(t, doc)
	})
}

// BenchmarkParse compares Parse with html.Parse on a plain page.
func BenchmarkParse(b *testing.B) {
	doc := []byte(plain)
	b.Run("htmltree", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			if _, ok := Parse(doc); !ok {
				b.Fatal("rejected")
			}
		}
	})
	b.Run("html.Parse", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			if _, err := html.Parse(bytes.NewReader(doc)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestParseTreeReusesReleasedTrees parses generated documents into trees,
// a few alive at a time, each released after the next ones were built:
// every tree must equal html.Parse's when built and still when it is
// released (no later tree took its nodes), and later trees must be built
// in the blocks of released ones.
func TestParseTreeReusesReleasedTrees(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	type parsed struct {
		tree *Tree
		want *html.Node
		doc  string
	}
	var alive []parsed
	released := map[*html.Node]bool{} // the first node of each released block
	reused, built := 0, 0
	release := func(p parsed) {
		if d := sameTree(p.tree.Root, p.want); d != "" {
			t.Fatalf("tree of %q changed before its release, at %s", p.doc, d)
		}
		for _, blk := range p.tree.nodes {
			released[&blk[0]] = true
		}
		p.tree.Release()
	}
	for i := range 4000 {
		doc := generatePlain(rng)
		if i%5 == 0 {
			doc = manyAttributes()
		}
		tree, ok := ParseTree([]byte(doc))
		if !ok {
			continue
		}
		built++
		want, err := html.Parse(strings.NewReader(doc))
		if err != nil {
			t.Fatalf("html.Parse(%q): %v", doc, err)
		}
		if d := sameTree(tree.Root, want); d != "" {
			t.Fatalf("ParseTree(%q) differs from html.Parse at %s", doc, d)
		}
		for _, blk := range tree.nodes {
			if released[&blk[0]] {
				reused++
				delete(released, &blk[0])
			}
		}
		alive = append(alive, parsed{tree, want, doc})
		if len(alive) > 3 {
			release(alive[0])
			alive = alive[1:]
		}
	}
	for _, p := range alive {
		release(p)
	}
	t.Logf("%d trees, %d node blocks reused", built, reused)
	if built < 1000 || reused == 0 {
		t.Errorf("%d trees built, %d node blocks reused: want 1000 or more, and some reused", built, reused)
	}
}
