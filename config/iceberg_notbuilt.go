//go:build !iceberg

package config

// IcebergBuilt says whether this binary was built with -tags iceberg,
// which compiles in iceberg:// outputs (Apache Iceberg tables).
const IcebergBuilt = false
