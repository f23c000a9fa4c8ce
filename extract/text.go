package extract

import (
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
)

// asciiSpace marks the ASCII bytes unicode.IsSpace accepts.
var asciiSpace = [utf8.RuneSelf]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}

// normalizer accumulates text with whitespace normalised in one pass: no
// leading or trailing whitespace, and every run of Unicode whitespace
// (NBSP included) collapsed to a single ASCII space, also across writes.
type normalizer struct {
	b       []byte
	pending bool // whitespace seen since the last kept character
}

func (w *normalizer) reset() {
	w.b = w.b[:0]
	w.pending = false
}

// writeString appends s, normalising whitespace.
func (w *normalizer) writeString(s string) {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if asciiSpace[c] {
				w.pending = true
			} else {
				w.keep()
				w.b = append(w.b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r != utf8.RuneError && unicode.IsSpace(r) {
			w.pending = true
		} else {
			w.keep()
			w.b = append(w.b, s[i:i+size]...)
		}
		i += size
	}
}

// keep emits the pending space, if any, before a kept character.
func (w *normalizer) keep() {
	if w.pending && len(w.b) > 0 {
		w.b = append(w.b, ' ')
	}
	w.pending = false
}

// normalize returns s with whitespace normalised.
func normalize(s string) string {
	var w normalizer
	w.writeString(s)
	return string(w.b)
}

// writeNode appends the value of element n: the attribute attr when attr is
// set (false when n lacks it), else the concatenated text of n's
// descendants, as goquery's Selection.Text returns it.
func (w *normalizer) writeNode(n *html.Node, attr string) bool {
	if attr == "" {
		w.writeText(n)
		return true
	}
	for _, a := range n.Attr {
		if a.Key == attr && a.Namespace == "" {
			w.writeString(a.Val)
			return true
		}
	}
	return false
}

func (w *normalizer) writeText(n *html.Node) {
	if n.Type == html.TextNode {
		w.writeString(n.Data)
		return
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		w.writeText(c)
	}
}

// writeRaw appends the value of element n as writeNode does, but as
// written: whitespace is kept.
func (w *normalizer) writeRaw(n *html.Node, attr string) bool {
	if attr == "" {
		w.appendText(n)
		return true
	}
	for _, a := range n.Attr {
		if a.Key == attr && a.Namespace == "" {
			w.b = append(w.b, a.Val...)
			return true
		}
	}
	return false
}

func (w *normalizer) appendText(n *html.Node) {
	if n.Type == html.TextNode {
		w.b = append(w.b, n.Data...)
		return
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		w.appendText(c)
	}
}

// rawText returns the text of n as written, using w's buffer.
func rawText(w *normalizer, n *html.Node) string {
	w.reset()
	w.appendText(n)
	return string(w.b)
}
