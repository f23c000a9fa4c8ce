package config

import (
	"slices"
	"strings"
)

// miscasedKey is a key written in another case than its documented
// spelling: "Name", "[Item.Fields]", "css" written as "Css".
type miscasedKey struct {
	key  string // as written, "Policy" or "item.fields.title.Css"
	want string // the documented spelling of its last part
}

// canonical returns path with every documented key spelt as documented,
// and records each one written in another case. The decoder matches keys
// without regard to case, but a config's keys are exact: each has one
// spelling, so one line and one value ("name" and "NAME" are not both a
// name).
func (ki *keyIndex) canonical(path []string) []string {
	out := slices.Clone(path)
	table := ""
	for i, part := range path {
		if table == "item.fields" { // part is a field's name
			table = "item.fields.*"
			continue
		}
		known := ""
		for _, k := range knownKeys[table] {
			if strings.EqualFold(k, part) {
				known = k
				break
			}
		}
		if known == "" {
			return out // unknown (the decoder says so) or inside a value
		}
		if written := strings.Join(path[:i+1], "."); known != part {
			if _, seen := ki.offset[written]; !seen {
				ki.miscased = append(ki.miscased, miscasedKey{key: written, want: known})
			}
		}
		out[i] = known
		table = join(table, known)
	}
	return out
}
