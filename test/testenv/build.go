package testenv

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/rivetmetal/rivet/core/release"
)

// BuildRelease builds the main packages pkgs ("./cmd/rivet",
// "./cmd/rivet-driver-fake", ...) from the source of a cut release, as
// recorded in the release table (Entry.Commit), and returns the directory
// holding the binaries, each named after its package's last element. Upgrade
// and compatibility tests use it to run the exact code of an older release
// beside HEAD.
func BuildRelease(t testing.TB, rel string, pkgs ...string) string {
	t.Helper()
	e, ok := release.Default().Lookup(rel)
	if !ok {
		t.Fatalf("release %q is not in the release table", rel)
	}
	if e.Commit == "" {
		t.Fatalf("release %s records no commit in core/release/releases.go", e.Label())
	}
	return BuildCommit(t, e.Commit, pkgs...)
}

// BuildCommit builds pkgs from the source of commit (taken from this
// checkout's git history, so it works on any clone with history) and returns
// the directory of the binaries. Builds are cached per commit under
// $RIVET_TEST_BUILD_CACHE (default: the user cache directory), shared by
// concurrent test processes through a file lock, so a release is compiled
// once per machine.
func BuildCommit(t testing.TB, commit string, pkgs ...string) string {
	t.Helper()
	root := RepoRoot()
	full, err := git(root, "rev-parse", "--verify", commit+"^{commit}")
	if err != nil {
		t.Fatalf("commit %s is not in this checkout's history (a shallow clone? run `git fetch --unshallow`): %v", commit, err)
	}
	cache := os.Getenv("RIVET_TEST_BUILD_CACHE")
	if cache == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			base = os.TempDir()
		}
		cache = filepath.Join(base, "rivet-test-builds")
	}
	dir := filepath.Join(cache, full)
	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatalf("build cache: %v", err)
	}
	unlock := lockFile(t, filepath.Join(dir, "lock"))
	defer unlock()

	var missing []string
	for _, p := range pkgs {
		if _, err := os.Stat(filepath.Join(bin, filepath.Base(p))); err != nil {
			missing = append(missing, p)
		}
	}
	if len(missing) == 0 {
		return bin
	}
	src := filepath.Join(dir, "src")
	if _, err := os.Stat(filepath.Join(src, "go.mod")); err != nil {
		if err := extract(root, full, src); err != nil {
			t.Fatalf("extract %s: %v", full, err)
		}
	}
	args := append([]string{"build", "-trimpath", "-o", bin + string(filepath.Separator)}, missing...)
	cmd := exec.Command("go", args...)
	cmd.Dir = src
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build at %s: %v\n%s", full[:12], err, out)
	}
	return bin
}

// extract writes the tree of commit into dst through `git archive`, into a
// temporary folder renamed into place, so an interrupted extraction never
// looks complete.
func extract(root, commit, dst string) error {
	tmp := dst + ".tmp"
	_ = os.RemoveAll(tmp)
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return err
	}
	archive := exec.Command("git", "-C", root, "archive", "--format=tar", commit)
	untar := exec.Command("tar", "-x", "-C", tmp)
	pipe, err := archive.StdoutPipe()
	if err != nil {
		return err
	}
	untar.Stdin = pipe
	var stderr bytes.Buffer
	archive.Stderr, untar.Stderr = &stderr, &stderr
	if err := untar.Start(); err != nil {
		return err
	}
	if err := archive.Run(); err != nil {
		_ = untar.Wait()
		return fmt.Errorf("git archive: %v: %s", err, stderr.String())
	}
	if err := untar.Wait(); err != nil {
		return fmt.Errorf("tar: %v: %s", err, stderr.String())
	}
	_ = os.RemoveAll(dst)
	return os.Rename(tmp, dst)
}

func git(dir string, args ...string) (string, error) {
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return "", fmt.Errorf("%v: %s", err, strings.TrimSpace(string(ee.Stderr)))
		}
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// lockFile takes an exclusive flock on path and returns its release.
func lockFile(t testing.TB, path string) func() {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatalf("build lock: %v", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		t.Fatalf("build lock: %v", err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}
}
