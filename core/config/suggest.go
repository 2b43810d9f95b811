package config

import (
	"strings"

	suggestpkg "github.com/rivetmetal/rivet/core/suggest"
)

// suggest returns ` (did you mean "x"?)` when one of known is obviously what
// was meant (suggest.Closest), otherwise "".
func suggest(name string, known []string) string {
	if best := suggestpkg.Closest(name, known); best != "" {
		return ` (did you mean "` + best + `"?)`
	}
	return ""
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
