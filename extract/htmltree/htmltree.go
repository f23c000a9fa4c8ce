// Package htmltree builds the tree golang.org/x/net/html's Parse builds,
// with less work, for documents in a plain subset of HTML: a
// <!DOCTYPE html> document whose elements the parser would nest as their
// tags do, with every end tag closing the element open last (an element
// whose end tag is optional may stay open to the end of the document).
//
// html.Parse runs the HTML5 tokenizer and tree construction algorithm,
// which read any input byte by byte and repair it: they imply elements,
// close open ones, move misplaced content and reorder attributes. Parse
// here scans for tags with a fast search instead, reads the tags,
// attributes, text, comments and text elements (<script>, <style>,
// <title>, <textarea> and the like) of plain markup, applies the few
// rules of the algorithm a plain page needs (the tbody a table row
// implies, the newline after <pre>, the sorted attributes of formatting
// elements, where whitespace between sections goes, duplicate attributes
// dropped), and gives up, reporting false, at the first byte or token the
// algorithm would treat differently: the caller then parses the
// document with html.Parse. Names, attribute values and text that are
// the document's bytes as they stand share one copy of the document, and
// nodes are allocated in blocks, instead of one allocation each; ParseTree
// builds a tree whose blocks a later ParseTree reuses once it is released.
//
// Parse and html.Parse agree on every document Parse accepts; the tests
// compare the two trees, node by node, over a corpus of documents.
package htmltree

import (
	"strings"
	"sync"

	"golang.org/x/net/html"
	a "golang.org/x/net/html/atom"
)

// maxDepth bounds the open elements; html.Parse fails past 512, and a
// document that deep is left to it.
const maxDepth = 500

// whitespace is what HTML counts as whitespace between tags.
const whitespace = " \t\r\n\f"

// mode is where in the document the builder is, as the HTML5 algorithm's
// insertion modes are.
type mode int

const (
	initial mode = iota
	beforeHTML
	beforeHead
	inHead
	afterHead
	inBody // and in a table: see builder.tableContext
	text   // the content of <script>, <style>, <title> and the like
	afterBody
	afterAfterBody
)

// builder is the state of one Parse.
type builder struct {
	// src is the document, and pos where the scanner is in it.
	src string
	pos int
	doc *html.Node
	// open is the stack of open elements.
	open []*html.Node
	mode mode
	// textReturn is the mode a text element's end tag returns to.
	textReturn mode
	// form is set while a form element is open.
	form bool
	// nodes and attrs are blocks the nodes and their attributes are
	// taken from.
	nodes []html.Node
	attrs []html.Attribute
	// tree, for ParseTree, holds the blocks taken from the pools.
	tree *Tree
}

// Parse returns the tree html.Parse would return for the document, and
// true; or nil and false when the document is not in the subset Parse
// handles (see the package doc).
func Parse(document []byte) (*html.Node, bool) {
	b := &builder{src: string(document)}
	return b.build()
}

// build parses b.src.
func (b *builder) build() (*html.Node, bool) {
	b.doc = b.node(html.Node{Type: html.DocumentNode})
	if !b.scan() || !b.end() {
		return nil, false
	}
	return b.doc, true
}

// Tree is a document ParseTree built, whose nodes and attributes Release
// hands to a later ParseTree. A crawl parses one page after another and
// drops each tree when it has read the page; reusing their memory spares
// the allocator and the garbage collector most of what parsing costs them.
type Tree struct {
	// Root is the document node.
	Root  *html.Node
	nodes []*[nodeBlock]html.Node
	attrs []*[attrBlock]html.Attribute
}

// The blocks of trees released, for ParseTree to reuse.
var (
	nodeBlocks sync.Pool // *[nodeBlock]html.Node
	attrBlocks sync.Pool // *[attrBlock]html.Attribute
)

// ParseTree is Parse into a Tree. The caller must call Release once it,
// and everything it kept of the tree, holds no node or attribute of it
// any more: a node is reused by the next ParseTree. The strings of the
// tree are never reused, so what was read from them stays as it is.
func ParseTree(document []byte) (*Tree, bool) {
	t := &Tree{}
	b := &builder{src: string(document), tree: t}
	root, ok := b.build()
	if !ok {
		t.Release()
		return nil, false
	}
	t.Root = root
	return t, true
}

// Release hands the tree's nodes and attributes to a later ParseTree;
// neither the tree nor any node of it may be used afterwards.
func (t *Tree) Release() {
	for _, blk := range t.nodes {
		nodeBlocks.Put(blk)
	}
	for _, blk := range t.attrs {
		attrBlocks.Put(blk)
	}
	*t = Tree{}
}

// nodeBlock is how many nodes one allocation holds.
const nodeBlock = 64

// node returns a new node with n's fields.
func (b *builder) node(n html.Node) *html.Node {
	if len(b.nodes) == cap(b.nodes) {
		b.nodes = b.nodeBlock()
	}
	b.nodes = append(b.nodes, n)
	return &b.nodes[len(b.nodes)-1]
}

// nodeBlock returns an empty block of nodes: a released one for
// ParseTree, a new one otherwise.
func (b *builder) nodeBlock() []html.Node {
	if b.tree == nil {
		return make([]html.Node, 0, nodeBlock)
	}
	blk, _ := nodeBlocks.Get().(*[nodeBlock]html.Node)
	if blk == nil {
		blk = new([nodeBlock]html.Node)
	}
	b.tree.nodes = append(b.tree.nodes, blk)
	return blk[:0]
}

// attrBlock returns an empty block of at least size attributes: a
// released one for ParseTree when size is attrBlock, a new one otherwise.
func (b *builder) attrBlock(size int) []html.Attribute {
	if b.tree == nil || size != attrBlock {
		return make([]html.Attribute, 0, size)
	}
	blk, _ := attrBlocks.Get().(*[attrBlock]html.Attribute)
	if blk == nil {
		blk = new([attrBlock]html.Attribute)
	}
	b.tree.attrs = append(b.tree.attrs, blk)
	return blk[:0]
}

// end reports whether the document may end where it does: html.Parse
// implies a head and a body for a document that ends before its body.
func (b *builder) end() bool {
	switch b.mode {
	case inBody, afterBody, afterAfterBody:
		return true
	}
	// In text mode too: the scanner gives up on a text element without
	// its end tag.
	return false
}

// doctype applies <!DOCTYPE html>.
func (b *builder) doctype() bool {
	if b.mode != initial {
		return false
	}
	b.doc.AppendChild(b.node(html.Node{Type: html.DoctypeNode, Data: "html"}))
	b.mode = beforeHTML
	return true
}

// text adds a piece of text as the source has it: whitespace where the
// document allows it, any text in the body and in text elements. Raw
// text (a script's, a style's) has no character references.
func (b *builder) text(raw string, rawText bool) bool {
	switch b.mode {
	case initial, beforeHTML, beforeHead:
		return isWhitespace(raw) // ignored
	case inHead, afterHead, afterBody, afterAfterBody:
		if !isWhitespace(raw) {
			return false
		}
	case inBody:
		if b.tableContext() && !isWhitespace(raw) {
			return false // html.Parse moves it before the table
		}
	}
	s := convertNewlines(raw)
	if !rawText && strings.IndexByte(s, '&') >= 0 {
		s = html.UnescapeString(s)
	}
	switch top := b.top(); top.DataAtom {
	case a.Pre, a.Listing, a.Textarea:
		// The newline right after <pre>, <listing> and <textarea> is not
		// part of their text.
		if top.FirstChild == nil {
			s = strings.TrimPrefix(s, "\n")
		}
	}
	if s != "" {
		b.addText(s)
	}
	return true
}

// addText appends text to the current element, to its last child when
// that is a text node, as html.Parse does.
func (b *builder) addText(s string) {
	top := b.top()
	if last := top.LastChild; last != nil && last.Type == html.TextNode {
		last.Data += s
		return
	}
	top.AppendChild(b.node(html.Node{Type: html.TextNode, Data: s}))
}

// comment adds a comment where html.Parse puts it.
func (b *builder) comment(data string) bool {
	n := b.node(html.Node{Type: html.CommentNode, Data: data})
	switch b.mode {
	case initial, beforeHTML, afterAfterBody:
		b.doc.AppendChild(n)
	case afterBody:
		b.open[0].AppendChild(n)
	case text:
		return false // the scanner reads a text element's content as text
	default:
		b.top().AppendChild(n)
	}
	return true
}
