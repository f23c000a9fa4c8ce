package config

import (
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
)

// Iceberg is the [iceberg] table: the catalog an output
// "iceberg://NAMESPACE.TABLE" is published through (SPEC section 9).
type Iceberg struct {
	// Namespace and Table name the table; a namespace of several levels
	// is dotted ("lake.shop").
	Namespace, Table string
	// Catalog is "sql" or "rest".
	Catalog string
	// URI is the catalog's: "sqlite:///abs/path/catalog.db",
	// "postgres://user@host:port/db" (the password from PGPASSWORD) or the
	// REST catalog's URL.
	URI string
	// Warehouse is where tables keep their data and metadata:
	// "file:///abs/path" or an object-storage URL as output takes; empty
	// for a REST catalog that says.
	Warehouse string
	// Line is the line of the [iceberg] table, for errors a run finds.
	Line int
}

// Iceberg catalogs.
const (
	IcebergSQL  = "sql"
	IcebergREST = "rest"
)

// IsIceberg reports whether an output is an Iceberg table
// ("iceberg://NAMESPACE.TABLE").
func IsIceberg(output string) bool { return strings.HasPrefix(strings.ToLower(output), "iceberg://") }

type rawIceberg struct {
	Catalog   string `toml:"catalog"`
	URI       string `toml:"uri"`
	Warehouse string `toml:"warehouse"`
}

// icebergName matches one level of a namespace, or a table name, of at
// most maxIcebergName bytes (checked apart: a counted repetition in the
// pattern would compile to 128 copies of its class, heap every process
// holds).
var icebergName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// maxIcebergName is the longest namespace level or table name, in bytes.
const maxIcebergName = 128

// icebergOutput checks "iceberg://NAMESPACE.TABLE" and returns it as it
// stands, its scheme in lower case.
func (v *validator) icebergOutput(raw string) string {
	if !IcebergBuilt {
		v.errorf("output", "%q: iceberg:// needs a binary built with Iceberg: make build-iceberg, or go build -tags iceberg ./cmd/databrew-stage", raw)
		return ""
	}
	rest := raw[len("iceberg://"):]
	parts := strings.Split(rest, ".")
	if len(parts) < 2 {
		v.errorf("output", "%q names no namespace: write iceberg://NAMESPACE.TABLE, such as iceberg://shop.books", raw)
		return ""
	}
	for _, p := range parts {
		if len(p) > maxIcebergName || !icebergName.MatchString(p) {
			v.errorf("output", "%q: %q is not a namespace or table name: up to 128 letters, digits and _, not starting with a digit", raw, p)
			return ""
		}
	}
	return "iceberg://" + rest
}

// iceberg reads the [iceberg] table: required with an iceberg:// output,
// refused with any other.
func (v *validator) iceberg(r *rawIceberg, output string) *Iceberg {
	if !IsIceberg(output) || !IcebergBuilt {
		if r != nil && IcebergBuilt {
			v.errorf("iceberg", "an [iceberg] table needs output = \"iceberg://NAMESPACE.TABLE\"; output is %q", output)
		}
		return nil
	}
	if r == nil {
		v.errorf("output", "%q needs an [iceberg] table saying where its catalog is (catalog, uri, warehouse): see docs/outputs.md", output)
		return nil
	}
	name := strings.TrimPrefix(output, "iceberg://")
	dot := strings.LastIndex(name, ".")
	ic := &Iceberg{Namespace: name[:dot], Table: name[dot+1:], Catalog: r.Catalog, Line: v.keys.line("iceberg")}
	if ic.Catalog == "" {
		ic.Catalog = IcebergSQL
	}
	switch ic.Catalog {
	case IcebergSQL:
		ic.URI = v.sqlCatalogURI(r.URI)
	case IcebergREST:
		ic.URI = v.restCatalogURI(r.URI)
	default:
		v.errorf("iceberg.catalog", "%q: want \"sql\" (SQLite or PostgreSQL) or \"rest\"", r.Catalog)
	}
	ic.Warehouse = v.warehouse(r.Warehouse, ic.Catalog)
	return ic
}

// sqlCatalogURI checks a SQL catalog's URI.
func (v *validator) sqlCatalogURI(raw string) string {
	u, err := url.Parse(raw)
	switch {
	case raw == "":
		v.errorf("iceberg.uri", "required: \"sqlite:///abs/path/catalog.db\" or \"postgres://user@host:port/db\"")
	case err != nil:
		v.errorf("iceberg.uri", "not a URL: %v", err)
	case u.Scheme == "sqlite" && (u.Host != "" || !filepath.IsAbs(u.Path)):
		v.errorf("iceberg.uri", "%q: a SQLite catalog is an absolute file path: sqlite:///abs/path/catalog.db", raw)
	case u.Scheme == "sqlite":
		return "sqlite://" + u.Path
	case u.Scheme != "postgres" && u.Scheme != "postgresql":
		v.errorf("iceberg.uri", "%q: a SQL catalog is sqlite:///abs/path/catalog.db or postgres://user@host:port/db", raw)
	case hasPassword(u):
		v.errorf("iceberg.uri", "the URI holds a password: give it through PGPASSWORD, never in the config")
	case u.Host == "":
		v.errorf("iceberg.uri", "%q names no host: postgres://user@host:port/db", raw)
	default:
		return raw
	}
	return ""
}

// restCatalogURI checks a REST catalog's URL.
func (v *validator) restCatalogURI(raw string) string {
	u, err := url.Parse(raw)
	switch {
	case raw == "":
		v.errorf("iceberg.uri", "required: the REST catalog's URL, such as https://catalog.example/api/catalog")
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		v.errorf("iceberg.uri", "%q: a REST catalog's URI is an http:// or https:// URL", raw)
	case hasPassword(u):
		v.errorf("iceberg.uri", "the URI holds credentials: give them through the environment, never in the config")
	default:
		return raw
	}
	return ""
}

func hasPassword(u *url.URL) bool {
	_, set := u.User.Password()
	return u.User != nil && set
}

// warehouse checks where tables keep their files: file:///abs/path or an
// s3:// URL as output takes it (checked as the publisher checks it, see
// checkWarehouse), required for a SQL catalog.
func (v *validator) warehouse(raw, catalog string) string {
	if raw == "" {
		if catalog == IcebergSQL {
			v.errorf("iceberg.warehouse", "required with a SQL catalog: \"file:///abs/path\" or an s3:// URL")
		}
		return ""
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		v.errorf("iceberg.warehouse", "not a URL: %v", err)
	case u.Scheme == "file" && (u.Host != "" && u.Host != "localhost" || !filepath.IsAbs(u.Path)):
		v.errorf("iceberg.warehouse", "%q: a local warehouse is an absolute path: file:///abs/path", raw)
	case u.Scheme == "file":
		return "file://" + filepath.Clean(u.Path)
	case u.Scheme != "s3":
		v.errorf("iceberg.warehouse", "%q: want file:///abs/path or an s3:// URL", raw)
	case u.User != nil:
		v.errorf("iceberg.warehouse", "the URL holds credentials: give them through the environment (AWS_* variables, profiles), never in the config")
	default:
		if err := checkWarehouse(raw); err != nil {
			v.errorf("iceberg.warehouse", "%v", err)
			return ""
		}
		return strings.TrimSuffix(raw, "/")
	}
	return ""
}
