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
	buildsMu   sync.Mutex
	buildCache = map[string]*build{} // release key (or "from:<commit>") → build; nil: failed
	oldLabel   string
)

// builds returns the old release's and the working tree's binaries, built
// once per test binary: the old release is the plan's newest cut release
// (RIVET_UPGRADE_FROM=<commit> overrides it). The working tree builds first
// and the old release after it: with -trimpath the two share the build
// cache for every package that did not change between them, so the second
// build is mostly cache hits (two builds side by side would compile the
// same packages twice).
func builds(t *testing.T) (old, cur *build) {
	t.Helper()
	cur = releaseBuild(t, release.HeadKey)
	if commit := os.Getenv("RIVET_UPGRADE_FROM"); commit != "" {
		old = cachedBuild(t, "from:"+commit, func() (string, error) {
			return testenv.BuildCommit(t, commit, commands...), nil
		})
		oldLabel = "commit " + commit + " (RIVET_UPGRADE_FROM)"
	} else {
		p := defaultPlan(t)
		old = releaseBuild(t, p.newest)
		e, _ := release.Default().Lookup(p.newest)
		oldLabel = "release " + e.Label() + " at " + e.Commit
	}
	t.Logf("old: %s, release %s, service version %d, API %s; new: the working tree, release %s, service version %d, API %s",
		oldLabel, old.info.Release, old.info.ServiceVersion, old.info.APIMax,
		cur.info.Release, cur.info.ServiceVersion, cur.info.APIMax)
	return old, cur
}

// releaseBuild returns the binaries of a release of the table (HeadKey:
// the working tree), built from its recorded commit (cached per commit by
// testenv) once per test binary.
func releaseBuild(t *testing.T, key string) *build {
	t.Helper()
	if key == release.HeadKey {
		return cachedBuild(t, key, func() (string, error) {
			dir := filepath.Join(workDir, "new")
			return dir, goBuild(testenv.RepoRoot(), dir)
		})
	}
	releaseBuild(t, release.HeadKey) // first: see builds
	return cachedBuild(t, key, func() (string, error) { return testenv.BuildRelease(t, key, commands...), nil })
}

// cachedBuild builds (once) and describes the binaries under key.
func cachedBuild(t *testing.T, key string, make func() (string, error)) *build {
	t.Helper()
	buildsMu.Lock()
	defer buildsMu.Unlock()
	if b, ok := buildCache[key]; ok {
		if b == nil {
			t.Fatalf("the build of %s failed in an earlier test", key)
		}
		return b
	}
	buildCache[key] = nil
	start := time.Now()
	dir, err := make()
	if err != nil {
		t.Fatal(err)
	}
	label := "old"
	switch {
	case key == release.HeadKey:
		label = "new"
	case !strings.HasPrefix(key, "from:"):
		label = key
	}
	b, err := describe(label, dir)
	if err != nil {
		t.Fatal(err)
	}
	buildCache[key] = b
	t.Logf("built %s (release %s) in %v", key, b.info.Release, time.Since(start).Round(time.Second))
	return b
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
