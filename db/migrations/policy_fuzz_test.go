package migrations

import "testing"

// FuzzCheckPolicy: the checker never panics on any SQL text, however
// malformed (unterminated quotes and comments included).
func FuzzCheckPolicy(f *testing.F) {
	for _, s := range []string{"ALTER TABLE t DROP c;", "'unterminated", "\"x", "/* open", "-- c\nRENAME TABLE a TO b", "ALTER TABLE t ADD (", "`"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		for _, v := range CheckPolicy("f.up.sql", sql, AllowedDrops) {
			if v.Line < 1 {
				t.Errorf("violation at line %d", v.Line)
			}
		}
	})
}
