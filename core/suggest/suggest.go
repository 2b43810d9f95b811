// Package suggest finds the name a user obviously meant among known ones,
// for "did you mean" hints in error messages (configuration options,
// hardware types).
package suggest

import "strings"

// Closest returns the one of known that name obviously means: the same name
// in another case, or the single closest name within a small edit distance
// (1 + len(name)/6, at most 3). It returns "" when there is none or two
// are equally close.
func Closest(name string, known []string) string {
	best, bestDist, tie := "", -1, false
	for _, k := range known {
		if strings.EqualFold(k, name) {
			return k
		}
		d := Distance(strings.ToLower(name), strings.ToLower(k))
		switch {
		case bestDist < 0 || d < bestDist:
			best, bestDist, tie = k, d, false
		case d == bestDist:
			tie = true
		}
	}
	limit := min(1+len(name)/6, 3)
	if bestDist < 0 || bestDist > limit || tie {
		return ""
	}
	return best
}

// Distance is the optimal string alignment distance between a and b, in
// bytes: insertions, deletions, substitutions and adjacent swaps ("prot" is
// one edit from "port").
func Distance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
