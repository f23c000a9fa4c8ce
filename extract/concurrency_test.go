package extract

import (
	"reflect"
	"sync"
	"testing"
)

// TestConcurrentUse shares one Extractor between goroutines; run with -race.
func TestConcurrentUse(t *testing.T) {
	items := mustCompile(t, bookSpec())
	cards := mustCompile(t, cardSpec())
	book, listing := fixture(t, "book.html"), fixture(t, "listing.html")
	page := mustURL(t, testPage)
	want, err := items.Item(mustParse(t, items, string(book)), page)
	if err != nil {
		t.Fatal(err)
	}
	wantCards := cards.Listing(mustParse(t, cards, string(listing)), page)

	var wg sync.WaitGroup
	errs := make(chan string, 16)
	for range 8 {
		wg.Go(func() {
			for range 20 {
				doc, err := items.Parse(book)
				if err != nil {
					errs <- err.Error()
					return
				}
				if got, err := items.Item(doc, page); err != nil || !reflect.DeepEqual(got, want) || got.Hash() != want.Hash() {
					errs <- "item differs under concurrency"
					return
				}
				doc, _ = cards.Parse(listing)
				if got := cards.Listing(doc, page); !reflect.DeepEqual(got, wantCards) {
					errs <- "listing differs under concurrency"
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
