package extract

import (
	"reflect"
	"testing"
	"time"
)

func TestBookFixture(t *testing.T) {
	x := mustCompile(t, bookSpec())
	doc, err := x.Parse(fixture(t, "book.html"))
	if err != nil {
		t.Fatal(err)
	}
	it, err := x.Item(doc, mustURL(t, testPage))
	if err != nil {
		t.Fatal(err)
	}
	want := Item{
		Key: "a897fe39b1053632",
		URL: testPage,
		Values: []any{
			"A Light in the Attic",
			51.77,
			int64(22),
			"a897fe39b1053632",
			[]string{"poetry", "classics", "humour"},
			"https://books.example.com/media/cache/fe/72/fe72f0532301ec28892ae79a629a293c.jpg",
			time.Date(2016, 3, 1, 10, 20, 30, 0, time.UTC),
		},
	}
	if !reflect.DeepEqual(it, want) {
		t.Errorf("item =\n%#v\nwant\n%#v", it, want)
	}
	if len(x.Fields()) != len(it.Values) {
		t.Errorf("values not aligned with fields")
	}
}
