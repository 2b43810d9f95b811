package config

import "strings"

// suggest returns ` (did you mean "x"?)` when one of known is obviously what
// was meant: the same name in another case, or the one closest name within
// a small edit distance. Otherwise it returns "".
func suggest(name string, known []string) string {
	best, bestDist, tie := "", -1, false
	for _, k := range known {
		if strings.EqualFold(k, name) {
			return ` (did you mean "` + k + `"?)`
		}
		d := editDistance(strings.ToLower(name), strings.ToLower(k))
		switch {
		case bestDist < 0 || d < bestDist:
			best, bestDist, tie = k, d, false
		case d == bestDist:
			tie = true
		}
	}
	limit := 1 + len(name)/6
	limit = min(limit, 3)
	if bestDist < 0 || bestDist > limit || tie {
		return ""
	}
	return ` (did you mean "` + best + `"?)`
}

// editDistance is the optimal string alignment distance between a and b,
// in bytes: insertions, deletions, substitutions and adjacent swaps ("prot"
// is one edit from "port").
func editDistance(a, b string) int {
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

// elsewhere returns ` (it is an option of [x])` when sections other than
// section declare name, "" otherwise.
func elsewhere(section, name string) string {
	var in []string
	for _, s := range declared.sections {
		if _, ok := declared.byName[s.name][name]; ok && s.name != section {
			in = append(in, "["+s.name+"]")
		}
	}
	if len(in) == 0 {
		return ""
	}
	return " (it is an option of " + strings.Join(in, " and ") + ")"
}
