package e2e

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/test/testenv"
)

// installHost is where the guide's absolute paths and example hosts land
// in TestInstallGuide: a root directory for /etc/rivet, /var/lib/rivet and
// /usr/local/bin, and 127.0.0.1 for every example name and address.
type installHost struct {
	root string
	repl *strings.Replacer
}

func newInstallHost(t *testing.T, apiPort string) *installHost {
	root := t.TempDir()
	return &installHost{root: root, repl: strings.NewReplacer(
		"/etc/rivet", filepath.Join(root, "etc/rivet"),
		"/var/lib/rivet", filepath.Join(root, "var/lib/rivet"),
		"/usr/local/bin", filepath.Join(root, "usr/local/bin"),
		"cond1.example.com", "127.0.0.1",
		"10.0.0.21", "127.0.0.1",
		"0.0.0.0", "127.0.0.1",
		"127.0.0.1:6385", "127.0.0.1:"+apiPort,
	)}
}

func (h *installHost) path(p string) string { return h.repl.Replace(p) }

// installMarker reads a block's "install-test: KIND [ARG]" marker.
func installMarker(b docBlock) (kind, arg string, ok bool) {
	rest, ok := strings.CutPrefix(b.marker, "install-test:")
	if !ok {
		return "", "", false
	}
	kind, arg, _ = strings.Cut(strings.TrimSpace(rest), " ")
	return kind, strings.TrimSpace(arg), true
}

// notForTheTest are the lines of a run block the test leaves out: it runs
// as its own user, who owns every file, so there is no rivet user to give
// them to.
var notForTheTest = regexp.MustCompile(`^(chown|chgrp) rivet\b`)

// TestInstallGuide runs docs/admin/install.md as written, on a fresh
// PostgreSQL database: the blocks marked "install-test: run" as shell
// scripts (with the guide's paths and example hosts mapped, see
// installHost), the configuration file of the "file" block, and for the
// "host" blocks what a host would do: the user's directories, the
// database, and the systemd units' ExecStart lines, for two hosts each
// running a conductor and an API. Then it enrolls, deploys and deletes
// nodes through both APIs, owned by both conductors. An unmarked shell
// block fails the test, so a command added to the guide is run or
// consciously left to the host.
func TestInstallGuide(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two conductors and two APIs")
	}
	dbURL := testenv.RequirePostgres(t)
	apiPorts := []string{portOf(freeTCP(t)), portOf(freeTCP(t))}
	rpcPorts := []string{portOf(freeTCP(t)), portOf(freeTCP(t))}
	h := newInstallHost(t, apiPorts[0])
	// Every host has /usr/local/bin, where the guide builds rivet.
	if err := os.MkdirAll(h.path("/usr/local/bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	const adminPassword, rpcPassword = "admin-secret-31", "rpc-secret-31"
	// The CLI's version cache goes to a temporary XDG_CACHE_HOME; Go's
	// build cache stays where it is, or the guide's go build starts cold.
	gocache, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(),
		"GOCACHE="+strings.TrimSpace(string(gocache)),
		"PATH="+h.path("/usr/local/bin")+string(os.PathListSeparator)+os.Getenv("PATH"),
		"RIVET_DATABASE_CONNECTION="+dbURL,
		"RIVET_JSON_RPC_PASSWORD="+rpcPassword,
		"RIVET_PASSWORD="+adminPassword,
		"XDG_CACHE_HOME="+t.TempDir(),
	)
	// The passwords rivet htpasswd reads, in the guide's order.
	stdin := adminPassword + "\n" + rpcPassword + "\n"
	var deferred []docBlock
	started := false
	for _, b := range docBlocks(t, "docs/admin/install.md") {
		kind, arg, marked := installMarker(b)
		if !marked {
			if b.lang == "sh" {
				t.Fatalf("install.md line %d: a sh block without an install-test marker; mark it run or host KIND", b.line)
			}
			continue
		}
		switch kind {
		case "run":
			if arg == "before-services" {
				deferred = append(deferred, b)
				continue
			}
			runGuideScript(t, h, env, stdin, b)
		case "file":
			p := h.path(arg)
			if err := os.WriteFile(p, []byte(h.path(b.body)), 0o640); err != nil {
				t.Fatalf("install.md line %d: write %s: %v", b.line, arg, err)
			}
		case "host":
			switch arg {
			case "user":
				makeGuideDirs(t, h, b)
			case "database":
				// RequirePostgres made it, empty; the guide's commands need
				// the server's superuser.
				if !strings.Contains(b.body, "createdb") {
					t.Fatalf("install.md line %d: the database block no longer creates a database", b.line)
				}
			case "services":
				for _, d := range deferred {
					runGuideScript(t, h, env, "", d)
				}
				startGuideServices(t, h, env, b, dbURL, rpcPorts, apiPorts)
				started = true
			default:
				t.Fatalf("install.md line %d: unknown host block %q", b.line, arg)
			}
		default:
			t.Fatalf("install.md line %d: unknown install-test kind %q", b.line, kind)
		}
	}
	if !started {
		t.Fatal("install.md starts no services")
	}
	enrollDeployDelete(t, apiPorts, "admin", adminPassword)
}

func portOf(addr string) string { return addr[strings.LastIndexByte(addr, ':')+1:] }

// runGuideScript runs a block as a shell script from the repository root,
// exiting at the first failing command.
func runGuideScript(t *testing.T, h *installHost, env []string, stdin string, b docBlock) {
	t.Helper()
	var lines []string
	for _, l := range strings.Split(b.body, "\n") {
		if !notForTheTest.MatchString(strings.TrimSpace(l)) {
			lines = append(lines, l)
		}
	}
	script := "set -e\n" + h.path(strings.Join(lines, "\n"))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", script)
	cmd.Dir = testenv.RepoRoot()
	cmd.Env = env
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("install.md line %d: %v\nscript:\n%s\noutput:\n%s", b.line, err, script, out)
	}
	t.Logf("install.md line %d:\n%s", b.line, out)
}

// makeGuideDirs makes the directories the block's `install -d` lines
// name (their owners are the test's user).
func makeGuideDirs(t *testing.T, h *installHost, b docBlock) {
	t.Helper()
	made := 0
	for _, l := range strings.Split(b.body, "\n") {
		f := strings.Fields(l)
		if len(f) < 2 || f[0] != "install" || f[1] != "-d" {
			continue
		}
		for _, a := range f[2:] {
			if strings.HasPrefix(a, "/") {
				if err := os.MkdirAll(h.path(a), 0o750); err != nil {
					t.Fatal(err)
				}
				made++
			}
		}
	}
	if made == 0 {
		t.Fatalf("install.md line %d: the user block makes no directory", b.line)
	}
}

// startGuideServices starts, for each of two hosts, the units the block
// enables, in its order, by their ExecStart lines; each waits until it
// is up (a conductor live in `rivet upgrade status`, an API answering).
func startGuideServices(t *testing.T, h *installHost, env []string, b docBlock, dbURL string, rpcPorts, apiPorts []string) {
	t.Helper()
	dbh, err := sql.Open("pgx", dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer dbh.Close()
	var units []string
	for _, l := range strings.Split(b.body, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(l), "systemctl enable --now "); ok {
			units = strings.Fields(rest)
		}
	}
	if len(units) == 0 {
		t.Fatalf("install.md line %d: no systemctl enable --now", b.line)
	}
	for host := range 2 {
		for _, unit := range units {
			file := filepath.Join(testenv.RepoRoot(), "configs/systemd", unit+".service")
			if !strings.Contains(b.body, "configs/systemd/"+unit+".service") {
				t.Fatalf("install.md line %d: enables %s without installing %s", b.line, unit, file)
			}
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			m := regexp.MustCompile(`(?m)^ExecStart=(.+)$`).FindSubmatch(data)
			if m == nil {
				t.Fatalf("%s has no ExecStart", file)
			}
			args := strings.Fields(h.path(string(m[1])))
			svcEnv := append(slices.Clone(env), "RIVET_JSON_RPC_PORT="+rpcPorts[host], "RIVET_API_PORT="+apiPorts[host])
			name := fmt.Sprintf("%s on host %d", unit, host+1)
			exited := startGuideService(t, name, args, svcEnv)
			switch args[len(args)-1] {
			case "conductor":
				reg := "127.0.0.1:" + rpcPorts[host]
				waitFor(t, 90*time.Second, name+" registered as "+reg, func() bool {
					exited()
					var online bool
					err := dbh.QueryRow("SELECT online FROM conductors WHERE hostname = $1", reg).Scan(&online)
					return err == nil && online
				})
			case "api":
				waitFor(t, 90*time.Second, name+" serving", func() bool {
					exited()
					res, err := http.Get("http://127.0.0.1:" + apiPorts[host] + "/")
					if err != nil {
						return false
					}
					res.Body.Close()
					return res.StatusCode == http.StatusOK
				})
			}
		}
	}
}

// startGuideService starts a service; the function it returns fails t
// when the service has exited.
func startGuideService(t *testing.T, name string, args, env []string) func() {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = env
	log := &testenv.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
		if t.Failed() {
			t.Logf("%s output:\n%s", name, tail(log.String(), 40))
		}
	})
	return func() {
		select {
		case <-done:
			t.Fatalf("%s exited:\n%s", name, tail(log.String(), 20))
		default:
		}
	}
}

// waitFor polls cond until it is true.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, limit)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// guideREST sends one authenticated request to the API on port.
func guideREST(t *testing.T, port, user, password, method, path string, body any) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, "http://127.0.0.1:"+port+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth(user, password)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-OpenStack-Ironic-API-Version", "1.62")
	res, err := (&http.Client{Timeout: time.Minute}).Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	var out map[string]any
	_ = json.Unmarshal(data, &out)
	if res.StatusCode >= 400 {
		t.Logf("%s %s on :%s: %d %s", method, path, port, res.StatusCode, data)
	}
	return res.StatusCode, out
}

// enrollDeployDelete enrolls fake-hardware nodes through one API, moves
// them to active and back through the other, and deletes them, until
// both conductors own one of them.
func enrollDeployDelete(t *testing.T, apiPorts []string, user, password string) {
	t.Helper()
	owners := map[string]bool{}
	for i := 0; i < 16 && len(owners) < 2; i++ {
		a, b := apiPorts[i%2], apiPorts[(i+1)%2]
		name := fmt.Sprintf("guide-%d", i)
		if code, _ := guideREST(t, a, user, password, "POST", "/v1/nodes", map[string]any{"name": name, "driver": "fake-hardware"}); code != http.StatusCreated {
			t.Fatalf("create %s through :%s: %d", name, a, code)
		}
		for _, target := range []string{"manage", "provide", "active", "deleted"} {
			if code, _ := guideREST(t, b, user, password, "PUT", "/v1/nodes/"+name+"/states/provision", map[string]any{"target": target}); code != http.StatusAccepted {
				t.Fatalf("%s %s through :%s: %d", target, name, b, code)
			}
			want := map[string]string{"manage": "manageable", "provide": "available", "active": "active", "deleted": "available"}[target]
			waitFor(t, 2*time.Minute, name+" "+want, func() bool {
				_, n := guideREST(t, a, user, password, "GET", "/v1/nodes/"+name, nil)
				if n["provision_state"] == want && n["target_provision_state"] == nil {
					if c, ok := n["conductor"].(string); ok && target == "active" {
						owners[c] = true
					}
					return true
				}
				if s, _ := n["provision_state"].(string); strings.HasSuffix(s, "failed") {
					t.Fatalf("%s: %s: %v", name, s, n["last_error"])
				}
				return false
			})
		}
		if code, _ := guideREST(t, a, user, password, "DELETE", "/v1/nodes/"+name, nil); code != http.StatusNoContent {
			t.Fatalf("delete %s through :%s: %d", name, a, code)
		}
		if code, _ := guideREST(t, b, user, password, "GET", "/v1/nodes/"+name, nil); code != http.StatusNotFound {
			t.Fatalf("%s after delete, through :%s: %d", name, b, code)
		}
	}
	if len(owners) < 2 {
		t.Fatalf("the nodes were deployed by %v only, want both conductors", owners)
	}
}
