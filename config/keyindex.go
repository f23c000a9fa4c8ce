package config

import (
	"strings"

	"github.com/pelletier/go-toml/v2/unstable"
)

// keyIndex maps dotted key paths ("policy.pause", "item.fields.price.css")
// to where they are written, so checks that run after decoding can still
// name the line.
type keyIndex struct {
	parser unstable.Parser
	offset map[string]int
	// miscased lists the keys written in another case than documented.
	miscased []miscasedKey
}

// indexKeys records the position of every key and table header in doc. A
// syntax error leaves the index partial; the decoder reports it.
func indexKeys(doc []byte) *keyIndex {
	ki := &keyIndex{offset: map[string]int{}}
	ki.parser.Reset(doc)
	var table []string
	for ki.parser.NextExpression() {
		n := ki.parser.Expression()
		switch n.Kind {
		case unstable.Table, unstable.ArrayTable:
			table = ki.keyParts(n.Key())
			ki.note(table, n.Key())
		case unstable.KeyValue:
			ki.keyValue(table, n)
		}
	}
	return ki
}

func (ki *keyIndex) keyValue(table []string, n *unstable.Node) {
	path := append(append([]string{}, table...), ki.keyParts(n.Key())...)
	ki.note(path, n.Key())
	if v := n.Value(); v.Kind == unstable.InlineTable {
		it := v.Children()
		for it.Next() {
			if child := it.Node(); child.Kind == unstable.KeyValue {
				ki.keyValue(path, child)
			}
		}
	}
}

func (ki *keyIndex) keyParts(it unstable.Iterator) []string {
	var parts []string
	for it.Next() {
		parts = append(parts, string(it.Node().Data))
	}
	return parts
}

// note records where path is first written, and its parents with it: a
// dotted key (title.css = "h1", policy.pause = "5m") writes the tables on
// its way, which have no header of their own. A key written in another
// case is recorded under its documented spelling too.
func (ki *keyIndex) note(path []string, it unstable.Iterator) {
	if !it.Next() {
		return
	}
	offset := int(it.Node().Raw.Offset)
	canon := ki.canonical(path)
	for i := range path {
		for _, key := range []string{strings.Join(path[:i+1], "."), strings.Join(canon[:i+1], ".")} {
			if _, seen := ki.offset[key]; !seen {
				ki.offset[key] = offset
			}
		}
	}
}

// line returns the line of key, or of its closest written parent, or 0.
func (ki *keyIndex) line(key string) int {
	for k := key; k != ""; {
		if off, ok := ki.offset[k]; ok {
			return ki.lineAt(off)
		}
		i := strings.LastIndexByte(k, '.')
		if i < 0 {
			break
		}
		k = k[:i]
	}
	return 0
}

func (ki *keyIndex) lineAt(offset int) int {
	data := ki.parser.Data()
	if offset > len(data) {
		offset = len(data)
	}
	return 1 + strings.Count(string(data[:offset]), "\n")
}

// order returns the position of key in the file, for keeping declared
// order; keys not found sort last.
func (ki *keyIndex) order(key string) int {
	if off, ok := ki.offset[key]; ok {
		return off
	}
	return int(^uint(0) >> 1)
}

// complete returns the full path of a key the decoder reported without the
// map keys on its way (item.fields.requird for item.fields.title.requird):
// the indexed key on the same line with the same last part.
func (ki *keyIndex) complete(key string, line int) string {
	if _, ok := ki.offset[key]; ok || line == 0 {
		return key
	}
	last := key[strings.LastIndexByte(key, '.')+1:]
	for k, off := range ki.offset {
		if strings.HasSuffix(k, "."+last) && ki.lineAt(off) == line {
			return k
		}
	}
	return key
}
