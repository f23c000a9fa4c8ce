// Package docs reads the project's Markdown documentation, README.md and
// docs/*.md, for the tests that keep it true: its fenced code blocks (with
// the HTML comment that marks one, such as <!-- fragment -->), its
// headings' anchors as GitHub makes them, and its relative links.
package docs

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode"
)

// Page is one Markdown file of the documentation.
type Page struct {
	Path string // slash-separated, relative to the repository root: README.md, docs/config.md
	Text string
}

// Pages reads README.md and every docs/*.md under root, the repository's
// root folder, README.md first, then the docs pages by name.
func Pages(root string) ([]Page, error) {
	names, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	rels := []string{"README.md"}
	for _, n := range names {
		rel, err := filepath.Rel(root, n)
		if err != nil {
			return nil, err
		}
		rels = append(rels, filepath.ToSlash(rel))
	}
	if len(rels) == 1 {
		return nil, fmt.Errorf("no docs/*.md under %s", root)
	}
	pages := make([]Page, 0, len(rels))
	for _, rel := range rels {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			return nil, err
		}
		pages = append(pages, Page{Path: rel, Text: string(b)})
	}
	return pages, nil
}

// Block is a fenced code block of a page.
type Block struct {
	Page   string // the page's Path
	Line   int    // the line of the opening fence, from 1
	Lang   string // the info string after the fence: toml, sh, ...
	Marker string // the text of an HTML comment on the last non-blank line before the fence, trimmed: "fragment", "shop: jsonld"
	Text   string // the block's lines without the fence's indentation
}

// Where names the block as page:line.
func (b Block) Where() string { return fmt.Sprintf("%s:%d", b.Page, b.Line) }

var comment = regexp.MustCompile(`^<!--\s*(.*?)\s*-->$`)

// Blocks returns the fenced code blocks of p in order. A fence may be
// indented (in a list item); the block's lines lose that indentation.
func (p Page) Blocks() []Block {
	var blocks []Block
	lines := strings.Split(p.Text, "\n")
	for i := 0; i < len(lines); i++ {
		trimmed := strings.TrimLeft(lines[i], " ")
		if !strings.HasPrefix(trimmed, "```") {
			continue
		}
		indent := len(lines[i]) - len(trimmed)
		b := Block{Page: p.Path, Line: i + 1, Lang: strings.TrimSpace(strings.TrimPrefix(trimmed, "```"))}
		for j := i - 1; j >= 0; j-- {
			if prev := strings.TrimSpace(lines[j]); prev != "" {
				if m := comment.FindStringSubmatch(prev); m != nil {
					b.Marker = m[1]
				}
				break
			}
		}
		var body []string
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			l := lines[i]
			if len(l)-len(strings.TrimLeft(l, " ")) >= indent {
				l = l[indent:]
			}
			body = append(body, l)
		}
		if len(body) > 0 {
			b.Text = strings.Join(body, "\n") + "\n"
		}
		blocks = append(blocks, b)
	}
	return blocks
}

// Heading is a heading of a page, outside code blocks.
type Heading struct {
	Level  int
	Text   string // as written, without the leading #s
	Anchor string // GitHub's anchor for it, unique in the page
	Line   int
}

// Headings returns p's ATX headings (# to ######) outside fenced code
// blocks, each with the anchor GitHub gives it: Anchor of its text, and a
// repeated one suffixed -1, -2, ... in order.
func (p Page) Headings() []Heading {
	var hs []Heading
	seen := map[string]int{}
	fenced := false
	for i, l := range strings.Split(p.Text, "\n") {
		if strings.HasPrefix(strings.TrimLeft(l, " "), "```") {
			fenced = !fenced
			continue
		}
		if fenced || !strings.HasPrefix(l, "#") {
			continue
		}
		level := len(l) - len(strings.TrimLeft(l, "#"))
		if level > 6 || !strings.HasPrefix(l[level:], " ") {
			continue
		}
		text := strings.TrimSpace(l[level:])
		a := Anchor(text)
		if n := seen[a]; n > 0 {
			seen[a] = n + 1
			a = fmt.Sprintf("%s-%d", a, n)
		} else {
			seen[a] = 1
		}
		hs = append(hs, Heading{Level: level, Text: text, Anchor: a, Line: i + 1})
	}
	return hs
}

// Anchor is GitHub's anchor for a heading's text: lower-cased, every
// character but letters, digits, spaces, - and _ dropped (the backticks of
// inline code and the marks of **emphasis** with them), and each space
// turned into -.
func Anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mark, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Section returns the text of the heading whose text is heading, up to the
// next heading of its level or above, and whether a page has one.
func Section(pages []Page, heading string) (Page, string, bool) {
	for _, p := range pages {
		hs := p.Headings()
		for i, h := range hs {
			if h.Text != heading {
				continue
			}
			lines := strings.Split(p.Text, "\n")
			end := len(lines)
			for _, next := range hs[i+1:] {
				if next.Level <= h.Level {
					end = next.Line - 1
					break
				}
			}
			return p, strings.Join(lines[h.Line-1:end], "\n"), true
		}
	}
	return Page{}, "", false
}

// Link is an inline link or image of a page: [text](target).
type Link struct {
	Page   string
	Line   int
	Target string
}

var (
	fence    = regexp.MustCompile("(?m)^ *```.*$")
	codeSpan = regexp.MustCompile("(`+)[^`]+?`+")
	htmlNote = regexp.MustCompile(`(?s)<!--.*?-->`)
	link     = regexp.MustCompile(`\]\(([^()\s]+)\)`)
)

// Links returns p's inline links, outside code blocks, code spans and HTML
// comments; their text may span lines.
func (p Page) Links() []Link {
	// Blank what is not prose, keeping every newline so lines still count.
	blank := func(s string) string {
		return strings.Map(func(r rune) rune {
			if r == '\n' {
				return r
			}
			return ' '
		}, s)
	}
	lines := strings.Split(p.Text, "\n")
	fenced := false
	for i, l := range lines {
		if fence.MatchString(l) {
			fenced = !fenced
			lines[i] = blank(l)
		} else if fenced {
			lines[i] = blank(l)
		}
	}
	text := strings.Join(lines, "\n")
	text = htmlNote.ReplaceAllStringFunc(text, blank)
	// Code spans end at their paragraph, so a stray backtick cannot hide
	// the links of the paragraphs after it.
	paras := strings.Split(text, "\n\n")
	for i, para := range paras {
		paras[i] = codeSpan.ReplaceAllStringFunc(para, blank)
	}
	text = strings.Join(paras, "\n\n")
	var links []Link
	for _, m := range link.FindAllStringSubmatchIndex(text, -1) {
		links = append(links, Link{
			Page:   p.Path,
			Line:   strings.Count(text[:m[0]], "\n") + 1,
			Target: text[m[2]:m[3]],
		})
	}
	return links
}

// Check resolves every relative link of pages against the files under
// root: the file or folder a link names must exist, and an #anchor must be
// a heading's anchor in the Markdown page it points into (the link's own
// page when it names no file). Links with a scheme (https:, mailto:) are
// not followed. pending names files (slash-separated, relative to root)
// that another change adds: a link to one that is missing is no problem.
// It returns one line per problem.
func Check(root string, pages []Page, pending map[string]bool) []string {
	anchors := map[string]map[string]bool{}
	anchorsOf := func(rel string) (map[string]bool, error) {
		if a, ok := anchors[rel]; ok {
			return a, nil
		}
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			return nil, err
		}
		a := map[string]bool{}
		for _, h := range (Page{Path: rel, Text: string(b)}).Headings() {
			a[h.Anchor] = true
		}
		anchors[rel] = a
		return a, nil
	}
	var problems []string
	for _, p := range pages {
		for _, l := range p.Links() {
			where := fmt.Sprintf("%s:%d: link %s", l.Page, l.Line, l.Target)
			if i := strings.Index(l.Target, ":"); i > 0 && !strings.ContainsAny(l.Target[:i], "/#.") {
				continue // https:, mailto:
			}
			file, anchor, _ := strings.Cut(l.Target, "#")
			rel := p.Path
			if file != "" {
				rel = path.Clean(path.Join(path.Dir(p.Path), file))
				if strings.HasPrefix(rel, "../") || path.IsAbs(file) {
					problems = append(problems, where+": points outside the repository")
					continue
				}
				if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(rel))); err != nil {
					if !pending[rel] {
						problems = append(problems, fmt.Sprintf("%s: no file %s", where, rel))
					}
					continue
				}
			}
			if anchor == "" {
				continue
			}
			if !strings.HasSuffix(rel, ".md") {
				problems = append(problems, fmt.Sprintf("%s: an anchor into %s, which is no Markdown page", where, rel))
				continue
			}
			a, err := anchorsOf(rel)
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s: %v", where, err))
				continue
			}
			if !a[anchor] {
				problems = append(problems, fmt.Sprintf("%s: %s has no heading with the anchor #%s", where, rel, anchor))
			}
		}
	}
	return problems
}
