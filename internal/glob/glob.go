// Package glob matches the simplest wildcard patterns, where * stands for
// any run of characters and ? for one: the patterns of a config's map keys
// and ignore_params.
package glob

import "unicode/utf8"

// Match reports whether s matches the pattern p, where * matches any run
// of characters and ? any one character; every other character matches
// itself, so a pattern has no classes and no escapes.
func Match(p, s string) bool {
	star, resume := -1, 0 // after the last *: where p and s resume
	pi, si := 0, 0
	for si < len(s) {
		if pi < len(p) {
			switch c, size := utf8.DecodeRuneInString(p[pi:]); {
			case c == '*':
				star, resume = pi+size, si
				pi += size
				continue
			case c == '?':
				_, n := utf8.DecodeRuneInString(s[si:])
				pi, si = pi+size, si+n
				continue
			default:
				if r, n := utf8.DecodeRuneInString(s[si:]); r == c {
					pi, si = pi+size, si+n
					continue
				}
			}
		}
		if star < 0 {
			return false
		}
		_, n := utf8.DecodeRuneInString(s[resume:])
		resume += n
		pi, si = star, resume
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}
