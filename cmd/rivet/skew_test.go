package main

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/db"
)

// lockedBuffer is a bytes.Buffer a running service writes while the test
// reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// apiRun is a `rivet api` running in the test process.
type apiRun struct {
	done   chan int
	stderr *lockedBuffer
	url    string // http://127.0.0.1:port
}

// startAPI runs `rivet api` on conf (a finalizeEnv config, plus extra lines
// appended to its [DEFAULT] section) and returns at once.
func startAPI(t *testing.T, conf string, defaults ...string) *apiRun {
	t.Helper()
	text, err := os.ReadFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(text), "[DEFAULT]\n", "[DEFAULT]\n"+strings.Join(append(defaults, ""), "\n"), 1)
	if err := os.WriteFile(conf, []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	port := regexp.MustCompile(`\[api\]\nhost_ip = 127.0.0.1\nport = (\d+)`).FindStringSubmatch(edited)
	if port == nil {
		t.Fatalf("no [api] port in %s", edited)
	}
	a := &apiRun{done: make(chan int, 1), stderr: &lockedBuffer{}, url: "http://127.0.0.1:" + port[1]}
	go func() { a.done <- run([]string{"rivet", "--config-file", conf, "api"}, &bytes.Buffer{}, a.stderr) }()
	return a
}

// status answers GET /v1/nodes at microversion mv: the status, or 0 when
// the API does not answer (yet).
func (a *apiRun) status(t *testing.T, mv string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, a.url+"/v1/nodes", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-OpenStack-Ironic-API-Version", mv)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// stop sends the test process SIGTERM (rivet api drains and exits) and
// waits for the exit.
func (a *apiRun) stop(t *testing.T) {
	t.Helper()
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-a.done:
	case <-time.After(20 * time.Second):
		t.Fatal("rivet api did not stop on SIGTERM")
	}
}

// waitStatus polls until GET /v1/nodes at mv answers want, or fails after
// limit (a deadline for a heartbeat to happen, not a timing assertion).
func (a *apiRun) waitStatus(t *testing.T, mv string, want int, limit time.Duration, why string) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		got := a.status(t, mv)
		if got == want {
			return
		}
		select {
		case code := <-a.done:
			t.Fatalf("%s: rivet api exited %d:\n%s", why, code, a.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			a.stop(t)
			t.Fatalf("%s: GET /v1/nodes at %s answers %d, want %d; stderr:\n%s", why, mv, got, want, a.stderr.String())
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// Reproduction C of issue 23: with a conductor pinned to 0.1 (it writes
// nodes at Node 1.0), an unpinned API served 1.31 and answered 200 to a
// PATCH of inspect_interface whose value the conductor then dropped.
// Conductors are unpinned first, then APIs (seed 000 step 3): rivet api
// now refuses to start unpinned, naming the conductor and the order, and
// never serves 1.31 meanwhile.
func TestAPIRefusesToServeAboveAPinnedConductor(t *testing.T) {
	conf, dbh := finalizeEnv(t)
	head := release.Default().Head()
	if _, err := dbh.RegisterService(t.Context(), db.ServiceRegistration{Hostname: "node-b", Binary: db.BinaryConductor,
		Release: release.Current, ServiceVersion: head.ServiceVersion, Pin: "0.1"}); err != nil {
		t.Fatal(err)
	}
	a := startAPI(t, conf)
	newest := head.API.String()
	deadline := time.Now().Add(20 * time.Second)
	for {
		select {
		case code := <-a.done:
			want := fmt.Sprintf("api: this rivet-api would serve release %s (API %s) but rivet-conductor on node-b "+
				"(pin_release_version = 0.1) stores objects at release 0.1 (\"anvil\") (API 1.26): a request it cannot store "+
				"would be accepted and its data dropped. Conductors are unpinned first, then APIs", release.Current, newest)
			if code != 1 || !strings.Contains(a.stderr.String(), want) {
				t.Fatalf("exit %d, stderr:\n%s\nwant exit 1 and %q", code, a.stderr.String(), want)
			}
			if !strings.Contains(a.stderr.String(), "until then keep [DEFAULT] pin_release_version = 0.1") {
				t.Errorf("the refusal does not say which pin to keep:\n%s", a.stderr.String())
			}
			assertNothingOnline(t, dbh)
			return
		default:
		}
		if got := a.status(t, newest); got != 0 {
			a.stop(t)
			t.Fatalf("rivet api started unpinned beside rivet-conductor on node-b pinned to 0.1 and answered %d at API %s: "+
				"writes of fields the conductor cannot store would be lost; stderr:\n%s", got, newest, a.stderr.String())
		}
		if time.Now().After(deadline) {
			a.stop(t)
			t.Fatalf("rivet api neither refused nor served; stderr:\n%s", a.stderr.String())
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// A conductor pinned older that appears while an API already serves newer
// (it started in a race, or its heartbeat came back) brings that API down
// to what the conductor stores at the API's next heartbeat: a request the
// conductor cannot store gets 406, never 200. Once the conductor is
// unpinned the API serves its own release again.
func TestAPIFollowsAConductorPinnedBelowIt(t *testing.T) {
	conf, dbh := finalizeEnv(t)
	head := release.Default().Head()
	a := startAPI(t, conf, "service_heartbeat_interval = 1")
	newest := head.API.String()
	a.waitStatus(t, newest, http.StatusOK, 20*time.Second, "unpinned API alone")
	if _, err := dbh.RegisterService(t.Context(), db.ServiceRegistration{Hostname: "node-b", Binary: db.BinaryConductor,
		Release: release.Current, ServiceVersion: head.ServiceVersion, Pin: "0.1"}); err != nil {
		t.Fatal(err)
	}
	a.waitStatus(t, newest, http.StatusNotAcceptable, 20*time.Second, "beside a conductor pinned to 0.1")
	if got := a.status(t, "1.26"); got != http.StatusOK {
		t.Errorf("GET at 1.26, what the conductor stores: %d", got)
	}
	if err := dbh.SetServicePin(t.Context(), "node-b", db.BinaryConductor, ""); err != nil {
		t.Fatal(err)
	}
	a.waitStatus(t, newest, http.StatusOK, 20*time.Second, "after the conductor was unpinned")
	a.stop(t)
}

// The other way round: a conductor pinned below what a live API serves
// refuses to start (going back, APIs are pinned first), naming the API.
func TestConductorRefusesToStartBelowALiveAPI(t *testing.T) {
	conf, dbh := finalizeEnv(t)
	head := release.Default().Head()
	if _, err := dbh.RegisterService(t.Context(), db.ServiceRegistration{Hostname: "node-b", Binary: db.BinaryAPI,
		Release: release.Current, ServiceVersion: head.ServiceVersion}); err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(conf, []byte(strings.Replace(string(text), "[DEFAULT]\n", "[DEFAULT]\npin_release_version = 0.1.1\n", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runCLI(t, "--config-file", conf, "conductor")
	want := fmt.Sprintf("conductor: this rivet-conductor would store objects at release 0.1 (\"anvil\") (API 1.26) but rivet-api on node-b "+
		"(unpinned) serves release %s (API %s): it would accept requests whose data this conductor drops. "+
		"Conductors are unpinned before APIs and pinned after them: set [DEFAULT] pin_release_version = 0.1 on rivet-api on node-b and send it SIGHUP first",
		release.Current, head.API)
	if code != 1 || !strings.Contains(errOut, want) {
		t.Fatalf("exit %d, stderr:\n%s\nwant exit 1 and %q", code, errOut, want)
	}
	assertNothingOnline(t, dbh)
}
