package catalogsite

// ExtractConfig is the extraction part of a databrew-stage config for this
// site — its [listing], [item] and [item.fields] tables, the SPEC's
// example — for the demo, the benchmark and the tests to share.
const ExtractConfig = `
[listing]
item_links = "article.product_pod h3 a"
next_page  = "li.next a"

[item]
key = "upc"

[item.fields]
title = { css = "div.product_main h1", required = true }
price = { css = "div.product_main p.price_color", type = "float64", regex = '[0-9]+\.[0-9]+', required = true }
stock = { css = "p.instock.availability", type = "int64", regex = '([0-9]+) available' }
upc   = { css = "table tr:nth-child(1) td", required = true }
tags  = { css = "ul.tags li", multiple = true }
image = { css = "div.item img", attr = "src", url = true }
`
