package lineage

import (
	"os"
	"path/filepath"

	"github.com/databrew/databrew-stage/verdict"
)

// outputStatistics is the outputStatistics facet of a published export:
// its rows and files, and their bytes when the files are in a local folder
// (a stat each); object storage would cost a request per file, so there
// the size is left out.
func (t *Tracker) outputStatistics(exp verdict.Export) *OutputStatisticsFacet {
	facet := &OutputStatisticsFacet{
		BaseFacet: t.base(OutputStatisticsFacetURL),
		RowCount:  int64(exp.Rows),
		FileCount: int64(len(exp.Files)),
	}
	if t.output.Namespace == LocalNamespace && t.iceberg == nil {
		if size, ok := localSize(exp.Path, exp.Files); ok {
			facet.Size = &size
		}
	}
	return facet
}

// localSize adds up the sizes of files in folder dir; ok is false when one
// cannot be read.
func localSize(dir string, files []string) (size int64, ok bool) {
	for _, name := range files {
		info, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			return 0, false
		}
		size += info.Size()
	}
	return size, true
}
