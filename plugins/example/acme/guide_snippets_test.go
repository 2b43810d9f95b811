package acme_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// goBlock is a fenced Go block of a Markdown file.
var goBlock = regexp.MustCompile("(?s)```go\n(.*?)```")

// packageClause finds a snippet's package name after its leading comments.
var packageClause = regexp.MustCompile(`(?m)^package ([A-Za-z_][A-Za-z0-9_]*)\s*$`)

// TestGuideSnippetsCompile: every Go block of docs/driver-author-guide.md
// is a complete file that compiles and passes go vet against the SDK of
// this tree, so a driver author can paste it. Each block goes into its own
// package of a scratch module that requires the repository through a
// replace directive; a block whose package ends in _test is compiled as a
// test file. On 9b9faca two blocks did not compile.
func TestGuideSnippetsCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a scratch module")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	guide, err := os.ReadFile(filepath.Join(root, "docs", "driver-author-guide.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := goBlock.FindAllStringSubmatch(string(guide), -1)
	if len(blocks) < 3 {
		t.Fatalf("found %d Go blocks in the guide; the extraction is broken", len(blocks))
	}
	mod := t.TempDir()
	rootMod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	goLine := regexp.MustCompile(`(?m)^go [0-9.]+$`).FindString(string(rootMod))
	goMod := fmt.Sprintf("module guidesnippets\n\n%s\n\nrequire github.com/rivetmetal/rivet v0.0.0\n\nreplace github.com/rivetmetal/rivet => %s\n", goLine, root)
	write := func(path, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(mod, "go.mod"), goMod)
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	write(filepath.Join(mod, "go.sum"), string(sum))
	where := map[string]int{} // directory → block number, for messages
	for i, b := range blocks {
		src := b[1]
		m := packageClause.FindStringSubmatch(src)
		if m == nil {
			t.Errorf("Go block %d of the guide is not a complete file (no package clause); a driver author cannot compile it:\n%s", i+1, src)
			continue
		}
		dir := fmt.Sprintf("block%02d", i+1)
		name := "snippet.go"
		if strings.HasSuffix(m[1], "_test") {
			name = "snippet_test.go"
		}
		write(filepath.Join(mod, dir, name), src)
		where[dir] = i + 1
	}
	cmd := exec.Command("go", "vet", "./...")
	cmd.Dir = mod
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off", "GOPROXY=off", "GOTOOLCHAIN=local")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the guide's Go blocks do not compile (blockNN is the NN-th Go block):\n%s", out)
	}
}
