package acme_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestGuideMatchesExample keeps docs/driver-author-guide.md honest: the main
// it shows is the example's main byte for byte, and every repository file it
// names exists.
func TestGuideMatchesExample(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	guide, err := os.ReadFile(filepath.Join(root, "docs", "driver-author-guide.md"))
	if err != nil {
		t.Fatal(err)
	}
	main, err := os.ReadFile(filepath.Join(root, "plugins", "example", "cmd", "rivet-driver-acme", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(guide), "```go\n"+string(main)+"```\n") {
		t.Error("the guide's main block differs from plugins/example/cmd/rivet-driver-acme/main.go")
	}
	for _, m := range regexp.MustCompile("`((?:plugins|docs|cmd)/[A-Za-z0-9_./-]+\\.go)`").FindAllStringSubmatch(string(guide), -1) {
		if _, err := os.Stat(filepath.Join(root, m[1])); err != nil {
			t.Errorf("the guide names %s, which does not exist", m[1])
		}
	}
}
