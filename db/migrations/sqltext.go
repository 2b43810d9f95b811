package migrations

import (
	"strings"
)

// statement is one SQL statement of a migration file, for the policy check.
type statement struct {
	line int    // 1-based line of its first token
	text string // the statement without comments, on one line, for messages
	code string // upper-cased, single-spaced, with literals and quoted identifiers blanked
}

// statements splits src on semicolons outside comments, string literals and
// quoted identifiers. Comments (-- and /* */) are dropped; string literals
// become ” and quoted identifiers become Q in code, so that words inside
// them ("rename", 'DROP TABLE') never look like SQL.
func statements(src string) []statement {
	clean := []byte(src) // comments blanked
	code := []byte(src)  // comments, literals and quoted identifiers blanked
	blank := func(b []byte, from, to int) {
		for i := from; i < to && i < len(b); i++ {
			if b[i] != '\n' {
				b[i] = ' '
			}
		}
	}
	for i := 0; i < len(src); {
		switch {
		case strings.HasPrefix(src[i:], "--"):
			end := strings.IndexByte(src[i:], '\n')
			if end < 0 {
				end = len(src) - i
			}
			blank(clean, i, i+end)
			blank(code, i, i+end)
			i += end
		case strings.HasPrefix(src[i:], "/*"):
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				end = len(src) - i - 2
			}
			blank(clean, i, i+end+4)
			blank(code, i, i+end+4)
			i += end + 4
		case src[i] == '\'' || src[i] == '"' || src[i] == '`':
			q := src[i]
			closeAt := strings.IndexByte(src[i+1:], q)
			if closeAt < 0 { // unterminated: the rest is the literal
				blank(code, i+1, len(src))
				i = len(src)
				break
			}
			closeAt += i + 1
			blank(code, i+1, closeAt)
			if q != '\'' {
				code[i], code[closeAt] = 'Q', ' '
			}
			i = closeAt + 1
		default:
			i++
		}
	}
	var out []statement
	start := 0
	for i := 0; i <= len(code); i++ {
		if i < len(code) && code[i] != ';' {
			continue
		}
		seg := string(code[start:i])
		if norm := normalise(seg); norm != "" {
			lead := len(seg) - len(strings.TrimLeft(seg, " \t\r\n"))
			out = append(out, statement{
				line: 1 + strings.Count(src[:start+lead], "\n"),
				text: strings.Join(strings.Fields(string(clean[start:i])), " "),
				code: norm,
			})
		}
		start = i + 1
	}
	return out
}

func normalise(s string) string {
	return strings.ToUpper(strings.Join(strings.Fields(s), " "))
}
