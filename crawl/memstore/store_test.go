package memstore_test

import (
	"testing"

	"github.com/databrew/databrew-stage/crawl"
	"github.com/databrew/databrew-stage/crawl/memstore"
	"github.com/databrew/databrew-stage/crawl/storetest"
)

func TestStoreConformance(t *testing.T) {
	storetest.Run(t, func(*testing.T) crawl.Store { return memstore.New() })
}
