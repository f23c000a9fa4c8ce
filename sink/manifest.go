package sink

import (
	"encoding/json"
	"time"
)

// Manifest is a run folder's _manifest.json: what the folder holds and how
// to check it.
type Manifest struct {
	SchemaVersion int        `json:"schema_version"`
	Config        string     `json:"config"`
	RunID         string     `json:"run_id"`
	Format        Format     `json:"format"`
	CreatedAt     time.Time  `json:"created_at"`
	Rows          int64      `json:"rows"`
	Changes       Changes    `json:"changes"`
	Files         []FileInfo `json:"files"`
	Schema        []Column   `json:"schema"`
}

// Changes counts a run folder's rows by _change.
type Changes struct {
	New     int64 `json:"new"`
	Changed int64 `json:"changed"`
	Removed int64 `json:"removed"`
}

// Encode renders the manifest as indented JSON.
func (m Manifest) Encode() ([]byte, error) {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
