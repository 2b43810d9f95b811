package conductor

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/objects"
)

// An authenticated deployment keeps serving through a rolling restart of
// its conductors: REST with http_basic, JSON-RPC with http_basic, every
// conductor stopped (SIGTERM) and replaced one at a time while a client
// keeps reading nodes and switching their power through the API. Every
// request gets its answer (409 NodeLocked, which clients retry, aside),
// no answer shows the BMC password, and an unauthenticated REST request
// is still refused.
func TestRollingRestartWithJSONRPCAuth(t *testing.T) {
	auth := newRPCAuth(t)
	c := newClusterAuth(t, auth)
	// Short ring expiry: a stopping conductor lingers this long.
	ring := "RIVET_DEFAULT_HASH_RING_RESET_INTERVAL=2"
	conductors := []*proc{c.startEnv("a", ring), c.startEnv("b", ring)}
	var nodes []*objects.Node
	for i := range 4 {
		nodes = append(nodes, c.available(fmt.Sprintf("rolling-%d", i), map[string]any{"fake_password": bmcPassword}))
	}
	restUser, restPassword := "admin", "rest-s3cret"
	apiPort := freePort(t)
	api := c.startAPI(apiPort, append(auth.env(), ring, "RIVET_DEFAULT_HOST=rivet-api", "RIVET_DEFAULT_AUTH_STRATEGY=http_basic",
		"RIVET_DEFAULT_HTTP_BASIC_AUTH_USER_FILE="+writeHtpasswd(t, restUser, restPassword))...)
	base := "http://127.0.0.1:" + strconv.Itoa(apiPort)
	if status, body, err := rest(base, http.MethodGet, "/v1/nodes/"+nodes[0].UUID, "", "", ""); err != nil || status != http.StatusUnauthorized {
		t.Fatalf("unauthenticated GET: %d %v %s, want 401", status, err, body)
	}

	// The load: per node, read it and flip its power, retrying 409
	// NodeLocked (a power change still running) as clients do.
	type tally struct {
		ok, locked int
		failures   []string
	}
	var mu sync.Mutex
	var total tally
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			target := []string{"power on", "power off"}
			for k := 0; ; k++ {
				select {
				case <-stop:
					return
				default:
				}
				reqs := [][3]string{
					{http.MethodGet, "/v1/nodes/" + n.UUID, ""},
					{http.MethodPut, "/v1/nodes/" + n.UUID + "/states/power", fmt.Sprintf(`{"target":%q}`, target[(i+k)%2])},
				}
				for _, r := range reqs {
					status, body, err := rest(base, r[0], r[1], r[2], restUser, restPassword)
					mu.Lock()
					switch {
					case err != nil:
						total.failures = append(total.failures, fmt.Sprintf("%s %s: %v", r[0], r[1], err))
					case strings.Contains(body, bmcPassword):
						total.failures = append(total.failures, fmt.Sprintf("%s %s: answer shows the BMC password", r[0], r[1]))
					case status == http.StatusConflict && strings.Contains(body, "locked"):
						total.locked++
					case status/100 != 2:
						total.failures = append(total.failures, fmt.Sprintf("%s %s: %d %s", r[0], r[1], status, body))
					default:
						total.ok++
					}
					mu.Unlock()
				}
				time.Sleep(20 * time.Millisecond)
			}
		}()
	}
	okNow := func() int { mu.Lock(); defer mu.Unlock(); return total.ok }
	c.waitUntil(30*time.Second, "requests served before the restarts", func() bool { return okNow() >= 20 })
	for i, old := range conductors {
		before := okNow()
		old.signal(t, syscall.SIGTERM)
		select {
		case <-old.done:
		case <-time.After(60 * time.Second):
			t.Fatalf("conductor %s did not exit within 60s of SIGTERM", old.name)
		}
		if old.err != nil {
			t.Fatalf("conductor %s exit: %v\n%s", old.name, old.err, old.log.String())
		}
		conductors[i] = c.startEnv(fmt.Sprintf("%c2", 'a'+i), ring)
		c.waitUntil(30*time.Second, "requests served after restarting "+old.name, func() bool { return okNow() >= before+20 })
	}
	close(stop)
	wg.Wait()
	select {
	case <-api.done:
		t.Fatalf("the API exited: %v", api.err)
	default:
	}
	t.Logf("%d requests answered, %d NodeLocked retried, %d failed", total.ok, total.locked, len(total.failures))
	if len(total.failures) > 0 {
		t.Fatalf("%d requests failed through the rolling restart, first ones:\n%s", len(total.failures),
			strings.Join(total.failures[:min(len(total.failures), 10)], "\n"))
	}
}

// `rivet api` and `rivet conductor` on one host with the default listeners
// (127.0.0.1) and no other network option work together, even when the
// host's name, under which the conductor registers, does not resolve to
// 127.0.0.1 (Debian maps it to 127.0.1.1, containers to their address;
// here it does not resolve at all): the API dials the conductor that shares
// its [DEFAULT] host at its [json_rpc] host_ip.
func TestSingleHostWithDefaultListeners(t *testing.T) {
	c := newCluster(t)
	host := "RIVET_DEFAULT_HOST=rivet-single-host.invalid" // both default to the machine's hostname
	c.startEnv("a", host)
	apiPort := freePort(t)
	c.startAPI(apiPort, host)
	base := "http://127.0.0.1:" + strconv.Itoa(apiPort)
	do := func(method, path, body string) (int, string) { return mustREST(t, base, method, path, body) }
	// Creating a node is an RPC to the conductor (create_node).
	if status, body := do(http.MethodPost, "/v1/nodes", `{"driver":"fake-hardware","name":"single"}`); status != http.StatusCreated {
		t.Fatalf("POST /v1/nodes: %d %s", status, body)
	}
	if status, body := do(http.MethodPut, "/v1/nodes/single/states/power", `{"target":"power on"}`); status != http.StatusAccepted {
		t.Fatalf("power on: %d %s", status, body)
	}
	c.waitUntil(20*time.Second, "node powered on through the conductor", func() bool {
		_, body := do(http.MethodGet, "/v1/nodes/single", "")
		return strings.Contains(body, `"power_state":"power on"`)
	})
}
