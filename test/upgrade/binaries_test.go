package upgrade

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/test/testenv"
)

// commands are the binaries every run needs, from both releases.
var commands = []string{"./cmd/rivet", "./cmd/rivet-sim", "./cmd/rivet-driver-fake", "./cmd/rivet-driver-ipmi", "./cmd/rivet-driver-redfish"}

// build is one release's binaries and what they say about themselves.
type build struct {
	label string // "old" or "new", for messages
	dir   string
	info  versionInfo
	// options holds the "section.option" names the release's rivet accepts:
	// a configuration file must not carry the others (unknown options stop
	// a service).
	options map[string]bool
}

// versionInfo is `rivet version --json`.
type versionInfo struct {
	Release        string            `json:"release"`
	ServiceVersion int               `json:"service_version"`
	APIMin         string            `json:"api_min"`
	APIMax         string            `json:"api_max"`
	RPC            string            `json:"rpc"`
	Objects        map[string]string `json:"objects"`
}

func (b *build) bin(name string) string { return filepath.Join(b.dir, name) }

// has reports whether the release knows [section] option.
func (b *build) has(section, option string) bool { return b.options[section+"."+option] }

var (
	buildsOnce         sync.Once
	oldBuild, newBuild *build
	oldLabel           string
	buildsErr          error
	buildsTook         time.Duration
)

// builds returns the old release's and the working tree's binaries, built
// once per test binary. The working tree builds first and the old release
// after it: with -trimpath the two share the build cache for every package
// that did not change between them, so the second build is mostly cache
// hits (two builds side by side would compile the same packages twice).
func builds(t *testing.T) (old, cur *build) {
	t.Helper()
	buildsOnce.Do(func() {
		start := time.Now()
		dir := filepath.Join(workDir, "new")
		if buildsErr = goBuild(testenv.RepoRoot(), dir); buildsErr != nil {
			return
		}
		if newBuild, buildsErr = describe("new", dir); buildsErr != nil {
			return
		}
		dir, oldLabel = buildOld(t)
		oldBuild, buildsErr = describe("old", dir)
		buildsTook = time.Since(start)
	})
	switch {
	case buildsErr != nil:
		t.Fatal(buildsErr)
	case oldBuild == nil || newBuild == nil:
		t.Fatal("the builds failed in an earlier test")
	}
	t.Logf("old: %s, release %s, service version %d, API %s; new: the working tree, release %s, service version %d, API %s; built in %v",
		oldLabel, oldBuild.info.Release, oldBuild.info.ServiceVersion, oldBuild.info.APIMax,
		newBuild.info.Release, newBuild.info.ServiceVersion, newBuild.info.APIMax, buildsTook.Round(time.Second))
	return oldBuild, newBuild
}

// goBuild builds commands of the working tree into dir.
func goBuild(src, dir string) error {
	cmd := exec.Command("go", append([]string{"build", "-trimpath", "-o", dir + string(filepath.Separator)}, commands...)...)
	cmd.Dir = src
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build of the working tree: %v\n%s", err, out)
	}
	return nil
}

// buildOld builds the release to upgrade from, from git history (cached per
// commit by testenv): RIVET_UPGRADE_FROM=<commit> if set, else the newest
// cut release of the release table.
func buildOld(t *testing.T) (dir, label string) {
	if commit := os.Getenv("RIVET_UPGRADE_FROM"); commit != "" {
		return testenv.BuildCommit(t, commit, commands...), "commit " + commit + " (RIVET_UPGRADE_FROM)"
	}
	rels := release.Default().Releases()
	if len(rels) == 0 {
		t.Fatal("the release table has no cut release to upgrade from")
	}
	last := rels[len(rels)-1]
	return testenv.BuildRelease(t, last.Version, commands...), "release " + last.Label() + " at " + last.Commit
}

// describe asks a build's rivet for its versions and option names.
func describe(label, dir string) (*build, error) {
	b := &build{label: label, dir: dir, options: map[string]bool{}}
	out, err := exec.Command(b.bin("rivet"), "version", "--json").Output()
	if err != nil {
		return nil, fmt.Errorf("%s version --json: %w", b.bin("rivet"), err)
	}
	if err := json.Unmarshal(out, &b.info); err != nil {
		return nil, fmt.Errorf("%s version --json: %w", b.bin("rivet"), err)
	}
	sample, err := exec.Command(b.bin("rivet"), "config", "sample").Output()
	if err != nil {
		return nil, fmt.Errorf("%s config sample: %w", b.bin("rivet"), err)
	}
	b.options = sampleOptions(sample)
	return b, nil
}

// sampleOptions reads "section.option" names from a configuration sample,
// where every option appears commented out as "#name = default".
func sampleOptions(sample []byte) map[string]bool {
	opts := map[string]bool{}
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(sample))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]") {
			section = strings.Trim(line, "[]")
			continue
		}
		name, _, ok := strings.Cut(strings.TrimPrefix(line, "#"), " =")
		if ok && strings.HasPrefix(line, "#") && !strings.ContainsAny(name, " \t") && name != "" {
			opts[section+"."+name] = true
		}
	}
	return opts
}
