package sink_test

import (
	"testing"

	"github.com/databrew/databrew-stage/sink"
	"github.com/databrew/databrew-stage/sink/sinktest"
)

func TestArrow(t *testing.T) {
	sinktest.Run(t, sink.FormatArrow, sinktest.ReadArrow)
}
