package extract

import "testing"

func BenchmarkItem(b *testing.B) {
	x := mustCompile(b, bookSpec())
	body := fixture(b, "book.html")
	page := mustURL(b, testPage)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		doc, err := x.Parse(body)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := x.Item(doc, page); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkListing(b *testing.B) {
	body := fixture(b, "listing.html")
	page := mustURL(b, "https://books.example.com/index.html")
	for _, bb := range []struct {
		name string
		spec Spec
		want int
	}{
		{"links", bookSpec(), 20},
		{"cards", cardSpec(), 20},
	} {
		b.Run(bb.name, func(b *testing.B) {
			x := mustCompile(b, bb.spec)
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				doc, err := x.Parse(body)
				if err != nil {
					b.Fatal(err)
				}
				l := x.Listing(doc, page)
				if len(l.ItemLinks)+len(l.Items) != bb.want {
					b.Fatalf("got %d links, %d items", len(l.ItemLinks), len(l.Items))
				}
			}
		})
	}
}

// BenchmarkExtract measures extraction alone on a parsed document.
func BenchmarkExtract(b *testing.B) {
	b.Run("item", func(b *testing.B) {
		x := mustCompile(b, bookSpec())
		doc := mustParse(b, x, string(fixture(b, "book.html")))
		page := mustURL(b, testPage)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := x.Item(doc, page); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cards", func(b *testing.B) {
		x := mustCompile(b, cardSpec())
		doc := mustParse(b, x, string(fixture(b, "listing.html")))
		page := mustURL(b, "https://books.example.com/index.html")
		b.ReportAllocs()
		for b.Loop() {
			x.Listing(doc, page)
		}
	})
}
