package state

import (
	"reflect"
	"testing"
)

// TestItemRecordsRoundTrip: every optional part of an item record — the
// full key, the challenger, the page number — reads back as written,
// alone or together, and a record cut short is refused.
func TestItemRecordsRoundTrip(t *testing.T) {
	base := itemRecord{hash: [16]byte{1, 2}, traversal: 7, pending: 9, flags: itemPublished, url: "http://h/p"}
	withKey := func(r itemRecord) itemRecord { r.flags |= itemFullKey; r.key = "a long key"; return r }
	withChallenger := func(r itemRecord) itemRecord {
		r.flags |= itemChallenger
		r.challenger, r.chTraversal = "http://h/q", 6
		return r
	}
	withPage := func(r itemRecord) itemRecord { r.flags |= itemPage; r.page = 300; return r }
	for _, r := range []itemRecord{base, withKey(base), withChallenger(base), withPage(base),
		withPage(withChallenger(withKey(base)))} {
		b := r.encode()
		got, err := decodeItemRecord(b)
		if err != nil || !reflect.DeepEqual(got, r) {
			t.Errorf("decode(encode(%+v)) = %+v, %v", r, got, err)
		}
		if r.flags&itemPage != 0 {
			// Cut inside the page number (two bytes, the URL after them).
			if _, err := decodeItemRecord(b[:len(b)-len(r.url)-1]); err == nil {
				t.Errorf("%+v cut inside its page number decodes", r)
			}
		}
	}
}
