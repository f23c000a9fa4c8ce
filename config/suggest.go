package config

import (
	"reflect"
	"strings"

	"github.com/databrew/databrew-stage/internal/closest"
)

// knownKeys lists every key a config may hold, by dotted table path, read
// from the raw structs' tags so the list cannot drift from the decoder.
var knownKeys = func() map[string][]string {
	m := map[string][]string{}
	var walk func(prefix string, t reflect.Type)
	walk = func(prefix string, t reflect.Type) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name := strings.Split(f.Tag.Get("toml"), ",")[0]
			m[prefix] = append(m[prefix], name)
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem() // an optional table
			}
			if ft.Kind() == reflect.Map {
				if ft.Elem().Kind() == reflect.Struct {
					// item.fields.<name>.<key>
					walk(join(prefix, name)+".*", ft.Elem())
				}
				continue // a map of values (request.headers.<name>, a field's map)
			}
			if ft.Kind() == reflect.Struct {
				walk(join(prefix, name), ft)
			}
		}
	}
	walk("", reflect.TypeFor[rawConfig]())
	return m
}()

func join(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

// suggest returns ` (did you mean "x"?)` for a misspelt key, or "".
func suggest(key string) string {
	parts := strings.Split(key, ".")
	table, last := strings.Join(parts[:len(parts)-1], "."), parts[len(parts)-1]
	if strings.HasPrefix(table, "item.fields.") {
		table = "item.fields.*"
	}
	best := closest.Word(last, knownKeys[table], 3)
	if best == "" {
		return ""
	}
	return ` (did you mean "` + best + `"?)`
}
