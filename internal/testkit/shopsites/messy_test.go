package shopsites

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// euroNumber reads "1.234,56 €", "€1.234,56", "EUR 1.234,56" or "2,2 kg"
// the way decimal = "," does.
var euroNumber = strings.NewReplacer("€", "", "EUR", "", "kg", "", "\u00a0", "", " ", "", ".", "", ",", ".")

func parseEuro(t *testing.T, key, s string) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(euroNumber.Replace(s), 64)
	if err != nil {
		t.Errorf("%s: %q: %v", key, s, err)
	}
	return f
}

func TestMessyListingUsesQueryOnlyNextLinks(t *testing.T) {
	shop, srv := newServer(t, Messy, Options{})
	doc := parse(t, getOK(t, srv.Client(), srv.URL+"/shop/all").body)
	if href := doc.Find("a[rel=next]").AttrOr("href", ""); href != "?pg=2" {
		t.Errorf("page 1 next href %q, want ?pg=2", href)
	}
	links, pages := walkListing(t, srv.Client(), srv.URL+"/shop/all", "div.product-list a.product-link", "a[rel=next]", "href")
	if want := truthURLs(shop.Truth(srv.URL)); !slices.Equal(links, want) {
		t.Errorf("listing links %v,\nwant %v", links, want)
	}
	if pages != 3 {
		t.Errorf("%d listing pages, want 3", pages)
	}
}

func TestMessyProductPagesHoldTheTruth(t *testing.T) {
	shop, srv := newServer(t, Messy, Options{})
	only := regexp.MustCompile(`^Only [0-9]+ left$`)
	seen := map[string]bool{}
	for _, p := range shop.Truth(srv.URL) {
		r := getOK(t, srv.Client(), p.URL)
		doc := parse(t, r.body)
		v := p.Values
		text := func(sel string) (string, bool) {
			s := doc.Find(sel)
			return strings.TrimSpace(s.Text()), s.Length() > 0
		}
		if ref, _ := text("span.ref"); ref != "Art.-Nr. "+p.Key || v["ref"] != p.Key {
			t.Errorf("%s: ref %q", p.Key, ref)
		}
		if name, _ := text("h1.product-name"); name != v["name"] {
			t.Errorf("%s: name %q, truth %v", p.Key, name, v["name"])
		}
		regularText, _ := text(".price-regular .amount")
		regular := parseEuro(t, p.Key, regularText)
		price := regular
		if promo, ok := text(".promo .amount"); ok && promo != "" {
			price = parseEuro(t, p.Key, promo)
			seen["sale price"] = true
		} else if ok {
			seen["empty sale price"] = true
		}
		if regular != v["regular_price"] || price != v["price"] {
			t.Errorf("%s: price %v regular %v, truth %v %v", p.Key, price, regular, v["price"], v["regular_price"])
		}
		for _, style := range []string{"\u00a0€", " €", "€1", "EUR ", "."} {
			if strings.Contains(regularText, style) {
				seen["price "+style] = true
			}
		}

		var weight, released any
		if w, ok := text("td.weight"); ok {
			weight = parseEuro(t, p.Key, w)
			seen["decimal comma weight"] = seen["decimal comma weight"] || strings.Contains(w, ",")
		}
		if d, ok := text("td.released"); ok {
			ts, err := time.Parse("2 January 2006", d)
			if err != nil {
				t.Errorf("%s: released %q: %v", p.Key, d, err)
			}
			released = ts
		}
		if weight != v["weight"] || !equalValue(released, v["released"]) {
			t.Errorf("%s: weight %v released %v, truth %v %v", p.Key, weight, released, v["weight"], v["released"])
		}
		seen["no weight"] = seen["no weight"] || weight == nil
		seen["no date"] = seen["no date"] || released == nil

		avail, _ := text("p.availability")
		seen[strings.Fields(avail)[0]] = true
		if inStock := strings.EqualFold(avail, "In stock") || only.MatchString(avail); inStock != v["in_stock"] {
			t.Errorf("%s: availability %q, truth in_stock %v", p.Key, avail, v["in_stock"])
		}
		stock := int64(0)
		if s, ok := text("td.stock"); ok && s != "Sold out" {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				t.Errorf("%s: stock %q: %v", p.Key, s, err)
			}
			stock = n
		}
		if stock != v["stock"] {
			t.Errorf("%s: stock %v, truth %v", p.Key, stock, v["stock"])
		}
		colour, _ := text("td.colour")
		if colour != v["colour"] {
			t.Errorf("%s: colour %q, truth %q", p.Key, colour, v["colour"])
		}
		seen["no colour"] = seen["no colour"] || colour == ""
		shipping := 4.95
		switch s, ok := text("td.shipping"); {
		case s == "Free":
			shipping = 0
		case ok:
			shipping = parseEuro(t, p.Key, s)
		default:
			seen["no shipping"] = true
		}
		if shipping != v["shipping"] {
			t.Errorf("%s: shipping %v, truth %v", p.Key, shipping, v["shipping"])
		}
	}
	for _, want := range []string{"sale price", "empty sale price", "price \u00a0€", "price  €", "price €1", "price EUR ", "price .",
		"decimal comma weight", "no weight", "no date", "In", "IN", "Only", "Sold", "Pre-order", "no colour", "no shipping"} {
		if !seen[want] {
			t.Errorf("no product has %q", want)
		}
	}
}
