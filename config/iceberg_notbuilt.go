//go:build !iceberg

package config

// IcebergBuilt says whether this binary was built with -tags iceberg,
// which compiles in iceberg:// outputs (Apache Iceberg tables).
const IcebergBuilt = false

// checkWarehouse is not called without Iceberg: an iceberg:// output is
// refused before its [iceberg] table is read.
func checkWarehouse(string) error { return nil }
