//go:build iceberg

package config

import "github.com/databrew/databrew-stage/publish/iceberg"

// IcebergBuilt says whether this binary was built with -tags iceberg,
// which compiles in iceberg:// outputs (Apache Iceberg tables).
const IcebergBuilt = true

// checkWarehouse checks an s3:// warehouse URL as the Iceberg publisher
// does when it opens the catalog (its parameters, its prefix), so that a
// config the publisher would refuse is refused with its file, line and
// key.
func checkWarehouse(raw string) error {
	_, err := iceberg.ParseWarehouse(raw)
	return err
}
