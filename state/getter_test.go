package state

import (
	"bytes"
	"math/rand/v2"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// TestBucketGetterAnswersAsGet looks up keys of a bucket of several pages,
// present and absent, in runs that go key after key (as a rerun reads a
// listing's item memos), in jumps back and forth, and past the last key:
// a getter that steps answers as the bucket's Get does every time. The
// getter opens its bucket at its first lookup; one of a bucket the file
// does not hold answers nothing.
func TestBucketGetterAnswersAsGet(t *testing.T) {
	// Even numbers from 2 to 4,000: every odd key, 0 and what is past
	// the last are absent. 2,000 values of 40 bytes fill many pages.
	db := scratchBucket(t, func(b *bolt.Bucket) error {
		for n := uint64(2); n <= 4000; n += 2 {
			if err := b.Put(pageKey(n), bytes.Repeat([]byte{byte(n)}, 40)); err != nil {
				return err
			}
		}
		return nil
	})
	var order []uint64
	for from := uint64(0); from < 4010; from += 97 { // runs forward, key after key
		for n := from; n < from+30; n++ {
			order = append(order, n)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 3000 { // jumps, back and forth
		order = append(order, rng.Uint64N(4010))
	}
	order = append(order, 3998, 3999, 4000, 4001, 4002, 5000, 4000, 1, 2, 3, 4)
	err := db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("b"))
		// Opened at the first lookup, as a read transaction's marks are.
		g := &bucketGetter{tx: tx, name: []byte("b"), steps: true}
		if none := (&bucketGetter{tx: tx, name: []byte("none")}).get(pageKey(2)); none != nil {
			t.Errorf("a getter of a bucket the file does not hold answered %v", none)
		}
		steps := 0
		for i, n := range order {
			at := g.at
			got, want := g.get(pageKey(n)), b.Get(pageKey(n))
			if !bytes.Equal(got, want) || (got == nil) != (want == nil) {
				t.Fatalf("lookup %d, of key %d: got %v, want %v", i, n, got, want)
			}
			if at != nil && bytes.Compare(pageKey(n), at) > 0 {
				steps++
			}
		}
		if steps < len(order)/2 {
			t.Errorf("only %d of %d lookups could step: the test does not test stepping", steps, len(order))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// scratchBucket opens a bbolt file of the test's own, calls fill with a new
// bucket "b" of it in a write transaction, and returns the file, closed
// when the test ends.
func scratchBucket(t *testing.T, fill func(b *bolt.Bucket) error) *bolt.DB {
	t.Helper()
	db, err := bolt.Open(t.TempDir()+"/scratch.db", 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	err = db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucket([]byte("b"))
		if err != nil {
			return err
		}
		return fill(b)
	})
	if err != nil {
		t.Fatal(err)
	}
	return db
}
