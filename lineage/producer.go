package lineage

import "github.com/databrew/databrew-stage/internal/buildinfo"

// ProjectURL identifies databrew-stage as the producer of events and
// facets.
const ProjectURL = "https://github.com/databrew/databrew-stage"

// Producer returns the producer URI of this build: ProjectURL, with the
// version's tree when the build knows its version
// (https://github.com/databrew/databrew-stage/tree/v1.2.3).
func Producer() string {
	if v := buildinfo.String(); v != "devel" {
		return ProjectURL + "/tree/" + v
	}
	return ProjectURL
}
