// Package closest finds the known word a misspelt one was meant to be,
// for the "did you mean" of config and expression errors.
package closest

// Word returns the candidate nearest to w by edit distance, when it is
// nearer than maxDist; "" when none is. The first of equally near ones
// wins.
func Word(w string, candidates []string, maxDist int) string {
	best, bestDist := "", maxDist
	for _, c := range candidates {
		if d := Distance(w, c); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// Distance is the Levenshtein distance between a and b, in bytes.
func Distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
