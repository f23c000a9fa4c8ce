package iceberg

import (
	"context"
	"strings"
)

// Name returns the table's name in its catalog, NAMESPACE.TABLE.
func (t *Table) Name() string { return strings.Join(t.ident, ".") }

// Catalog returns the catalog's URI without a password.
func (t *Table) Catalog() string { return redactedURI(t.o.URI) }

// Location returns the table's location (a URL: its data and metadata
// files are under it) as the catalog has the table now.
func (t *Table) Location(ctx context.Context) (string, error) {
	tbl, err := t.load(ctx)
	if err != nil {
		return "", err
	}
	return tbl.Location(), nil
}
