package upgrade

import (
	"encoding/csv"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/test/testenv"
)

// haproxy is the load balancer in front of the APIs, run in the foreground
// as a child of the test, with an admin socket to read server states.
type haproxy struct {
	p      *proc
	url    string
	socket string
}

// backend is the HAProxy backend holding the APIs.
const backend = "rivet_api"

// haproxyConfig is the load balancer every run uses. Why each line:
//
//   - option http-server-close: every request to an API travels on a new
//     TCP connection that the API closes after answering. With keep-alive
//     to the servers (any http-reuse mode), HAProxy may send a request on
//     an idle connection at the instant a stopping API closes it; HAProxy
//     leaves that case to the client ("http-reuse safe" counts on browsers
//     resending), so a PATCH or a power request would come back as a 502.
//     A fresh connection per request leaves one failure mode, "could not
//     connect", which the next line covers. Clients keep their own
//     connections to HAProxy alive.
//   - retries 3 + option redispatch 1, retry-on left at its default
//     (conn-failure): a request whose connection is refused goes to the
//     other API; it was never sent, so resending it is always safe.
//     Nothing else is replayed: HAProxy's documentation warns that
//     empty-response or status retries need replay protection, which a
//     POST to the REST API lacks.
//   - health checks every 200 ms, two failures mark a server down, two
//     successes up, each check allowed a second (on a loaded machine a
//     200 ms check timeout took both APIs out at once): GET /healthz when
//     the APIs serve it. An API that got SIGTERM answers 503 there during
//     [api] shutdown_delay while still serving, so HAProxy stops sending it
//     requests long before its listener closes: the drain, not a retry, is
//     what loses nothing.
//     Releases without /healthz get a TCP check and are drained through
//     the admin socket instead.
const haproxyConfig = `global
    stats socket %[1]s mode 600 level admin
    maxconn 2000

defaults
    mode http
    timeout connect 2s
    timeout client 2m
    timeout server 2m
    timeout queue 10s
    timeout check 1s
    retries 3
    option redispatch 1
    option http-server-close

frontend api
    bind 127.0.0.1:%[2]d
    default_backend ` + backend + `

backend ` + backend + `
    balance roundrobin
%[3]s    default-server inter 200ms fastinter 100ms downinter 200ms fall 2 rise 2
%[4]s`

// requireHAProxy returns the haproxy binary (Debian package haproxy).
func requireHAProxy(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("haproxy")
	if err != nil {
		testenv.Unavailable(t, "haproxy not on PATH (apt-get install haproxy)")
	}
	return p
}

// startHAProxy balances the APIs at addrs (name → host:port).
func startHAProxy(t *testing.T, dir, logDir string, healthz bool, names, addrs []string) *haproxy {
	t.Helper()
	bin := requireHAProxy(t)
	port := freePort(t)
	h := &haproxy{url: fmt.Sprintf("http://127.0.0.1:%d", port), socket: filepath.Join(dir, "haproxy.sock")}
	check := ""
	if healthz {
		check = "    option httpchk GET /healthz\n    http-check expect status 200\n"
	}
	var servers strings.Builder
	for i, name := range names {
		fmt.Fprintf(&servers, "    server %s %s check\n", name, addrs[i])
	}
	conf := filepath.Join(dir, "haproxy.cfg")
	if err := os.WriteFile(conf, fmt.Appendf(nil, haproxyConfig, h.socket, port, check, servers.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin, "-c", "-q", "-f", conf).CombinedOutput(); err != nil {
		t.Fatalf("haproxy -c: %v\n%s", err, out)
	}
	h.p = startProc(t, logDir, "haproxy", bin, "-db", "-f", conf)
	waitFor(t, 10*time.Second, "haproxy serving with every API up", func() bool {
		if h.p.exited() {
			t.Fatalf("haproxy exited: %v\n%s", h.p.err, h.p.log.String())
		}
		st, err := h.states()
		if err != nil {
			return false
		}
		for _, name := range names {
			if st[name] != "UP" {
				return false
			}
		}
		return true
	})
	return h
}

// command runs one command on the admin socket.
func (h *haproxy) command(cmd string) (string, error) {
	c, err := net.DialTimeout("unix", h.socket, 2*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, cmd+"\n"); err != nil {
		return "", err
	}
	b, err := io.ReadAll(c)
	return string(b), err
}

// states returns each API server's status as HAProxy sees it (UP, DOWN,
// DRAIN, MAINT, "UP 1/2", …).
func (h *haproxy) states() (map[string]string, error) {
	out, err := h.command("show stat")
	if err != nil {
		return nil, err
	}
	r := csv.NewReader(strings.NewReader(strings.TrimPrefix(out, "# ")))
	r.FieldsPerRecord = -1
	recs, err := r.ReadAll()
	if err != nil || len(recs) == 0 {
		return nil, fmt.Errorf("show stat: %v: %q", err, out)
	}
	col := map[string]int{}
	for i, name := range recs[0] {
		col[name] = i
	}
	st := map[string]string{}
	for _, rec := range recs[1:] {
		if len(rec) > col["status"] && rec[col["pxname"]] == backend && rec[col["svname"]] != "BACKEND" {
			st[rec[col["svname"]]] = rec[col["status"]]
		}
	}
	return st, nil
}

// waitState waits until HAProxy reports server in state.
func (h *haproxy) waitState(t *testing.T, server, state string, limit time.Duration) {
	t.Helper()
	waitFor(t, limit, "haproxy: "+server+" "+state, func() bool {
		st, err := h.states()
		return err == nil && st[server] == state
	})
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// waitFor polls cond every 50 ms until it holds; after limit, t fails.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > limit {
			t.Fatalf("%s: not within %v", what, limit)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return time.Since(start)
}
