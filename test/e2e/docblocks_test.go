package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rivetmetal/rivet/test/testenv"
)

// docBlock is one fenced code block of a Markdown file, with the HTML
// comment on the line before its opening fence, if any.
type docBlock struct {
	marker string // the comment's text, without <!-- and -->; "" if none
	lang   string // the fence's info string: sh, ini, console, …
	body   string
	line   int // line number of the opening fence
}

// docBlocks reads the fenced code blocks of the Markdown file at rel (a
// path from the repository's root).
func docBlocks(t *testing.T, rel string) []docBlock {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), rel))
	if err != nil {
		t.Fatal(err)
	}
	var (
		blocks []docBlock
		cur    *docBlock
		prev   string
	)
	for i, line := range strings.Split(string(b), "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case cur == nil && strings.HasPrefix(trimmed, "```"):
			cur = &docBlock{lang: strings.TrimPrefix(trimmed, "```"), line: i + 1}
			if m, ok := strings.CutPrefix(prev, "<!--"); ok {
				cur.marker = strings.TrimSpace(strings.TrimSuffix(m, "-->"))
			}
		case cur != nil && trimmed == "```":
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			cur.body += line + "\n"
		}
		if trimmed != "" {
			prev = trimmed
		}
	}
	if cur != nil {
		t.Fatalf("%s: the code block at line %d is not closed", rel, cur.line)
	}
	return blocks
}
