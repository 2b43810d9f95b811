package conductor

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/core/rpc"
	"github.com/rivetmetal/rivet/core/version"
	"golang.org/x/crypto/bcrypt"
)

// bmcPassword is the secret every node of these tests carries; no
// unauthenticated answer may hold it.
const bmcPassword = "bmc-s3cret-exposure"

// rpcAuth is JSON-RPC http_basic: the conductors' htpasswd file and the
// credentials their callers send.
type rpcAuth struct{ user, password, file string }

func newRPCAuth(t *testing.T) *rpcAuth {
	t.Helper()
	a := &rpcAuth{user: "rpc", password: "rpc-s3cret"}
	a.file = writeHtpasswd(t, a.user, a.password)
	return a
}

// env configures a conductor (server side) and an API (client side).
func (a *rpcAuth) env() []string {
	return []string{"RIVET_JSON_RPC_AUTH_STRATEGY=http_basic", "RIVET_JSON_RPC_HTTP_BASIC_AUTH_USER_FILE=" + a.file,
		"RIVET_JSON_RPC_USERNAME=" + a.user, "RIVET_JSON_RPC_PASSWORD=" + a.password}
}

func writeHtpasswd(t *testing.T, user, password string) string {
	t.Helper()
	h, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "htpasswd")
	if err := os.WriteFile(path, []byte(user+":"+string(h)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// recordCalls returns the JSON-RPC request bodies the real client sends for
// update_node, change_node_power_state and create_node, recorded by a fake
// conductor, so they can be replayed byte for byte.
func recordCalls(t *testing.T, n *objects.Node) map[string][]byte {
	t.Helper()
	var mu sync.Mutex
	bodies := map[string][]byte{}
	rec := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var env struct {
			Method string          `json:"method"`
			ID     json.RawMessage `json:"id"`
		}
		_ = json.Unmarshal(body, &env)
		mu.Lock()
		bodies[env.Method] = body
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":null}`, env.ID)
	}))
	defer rec.Close()
	reg := objects.NewRegistry()
	if err := objects.Install(reg); err != nil {
		t.Fatal(err)
	}
	pinner := release.NewPinner(release.Default(), release.Pin{Mode: release.PinLatest})
	client := rpc.NewClient(rpc.ConductorMethods(), func() version.Version { return pinner.Effective().RPC },
		rpc.ObjectCodecFor(reg, pinner), rpc.NewHTTPTransport(rpc.HTTPTransportOptions{Timeout: 5 * time.Second}))
	host := rec.Listener.Addr().String()
	router := rpc.NewRouter(func(context.Context) ([]rpc.ConductorInfo, error) {
		return []rpc.ConductorInfo{{Hostname: host, HardwareTypes: []string{"fake-hardware"}}}, nil
	}, 5, time.Second)
	api := rpc.ConductorAPI{Client: client, Router: router}
	ctx := context.Background()
	_, _ = api.UpdateNode(ctx, n)
	_ = api.ChangeNodePowerState(ctx, n, "power on", 0)
	name := "created-behind-the-api"
	active := "active"
	_, _ = api.CreateNode(ctx, &objects.Node{Name: &name, Driver: "fake-hardware", ProvisionState: active,
		DriverInfo: map[string]any{"fake_password": bmcPassword}})
	for _, m := range []string{"update_node", "change_node_power_state", "create_node"} {
		if len(bodies[m]) == 0 {
			t.Fatalf("the client sent no %s call to record (got %d calls)", m, len(bodies))
		}
	}
	return bodies
}

// post sends body to a conductor's JSON-RPC port, with credentials when
// user is set.
func post(t *testing.T, addr string, body []byte, user, password string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if user != "" {
		req.SetBasicAuth(user, password)
	}
	res, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", addr, err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(out)
}

// The attack of issue 22: unauthenticated JSON-RPC calls straight to a
// conductor's port, skipping the REST API. With http_basic, the very calls
// the API sends are refused 401 without a byte of node data, and change
// nothing; with the credentials the same bytes are served (so what stops
// them is the authentication, not a malformed body).
func TestJSONRPCRefusesUnauthenticatedCalls(t *testing.T) {
	auth := newRPCAuth(t)
	c := newClusterAuth(t, auth)
	p := c.start("a")
	n := c.available("exposed", map[string]any{"fake_password": bmcPassword})
	bodies := recordCalls(t, n)
	powerBefore := deref(c.node(n.UUID).PowerState)

	for _, method := range []string{"update_node", "change_node_power_state", "create_node"} {
		for _, cred := range []struct{ user, password string }{{"", ""}, {auth.user, "wrong"}, {"nobody", auth.password}} {
			status, body := post(t, p.name, bodies[method], cred.user, cred.password)
			if status != http.StatusUnauthorized {
				t.Errorf("%s as %q: HTTP %d, want 401: %s", method, cred.user, status, body)
			}
			for _, leak := range []string{bmcPassword, n.UUID, "driver_info", "rivet_object"} {
				if strings.Contains(body, leak) {
					t.Errorf("%s as %q: the 401 answer holds %q: %s", method, cred.user, leak, body)
				}
			}
		}
	}
	if got := deref(c.node(n.UUID).PowerState); got != powerBefore {
		t.Errorf("power state %q after the unauthenticated calls, was %q", got, powerBefore)
	}
	if x, err := c.store.GetNode(context.Background(), "created-behind-the-api"); err == nil {
		t.Errorf("an unauthenticated create_node created node %s in %q", x.UUID, x.ProvisionState)
	}

	status, body := post(t, p.name, bodies["update_node"], auth.user, auth.password)
	if status != http.StatusOK || !strings.Contains(body, n.UUID) {
		t.Fatalf("the recorded update_node with credentials: HTTP %d %s, want the node", status, body)
	}
}

// With the default [json_rpc] host_ip a conductor listens on 127.0.0.1
// only: the same port on another address of the host refuses connections
// (127.0.0.2 stands for any other address: tests stay on loopback).
func TestJSONRPCDefaultListensOnLoopbackOnly(t *testing.T) {
	c := newCluster(t)
	p := c.start("a") // writeConfig leaves [json_rpc] host_ip at its default
	if !strings.Contains(p.log.String(), "JSON-RPC listens on 127.0.0.1") {
		t.Errorf("the conductor did not log that it listens on loopback only:\n%s", p.log.String())
	}
	_, port, _ := net.SplitHostPort(p.name)
	conn, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.2", port), 2*time.Second)
	if err == nil {
		conn.Close()
		t.Fatalf("the conductor's JSON-RPC port answers on 127.0.0.2:%s, want 127.0.0.1 only", port)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Logf("dial 127.0.0.2:%s: %v", port, err)
	}
	if _, err := c.api.UpdateNode(context.Background(), c.available("reachable", nil)); err != nil {
		t.Fatalf("the conductor is not reachable on loopback: %v", err)
	}
}

// A conductor whose JSON-RPC would listen on every address without
// authentication refuses to start, before it opens the database or any
// port, naming the options that fix it; `rivet config check` says the
// same; an API-only check of the file does not (an API opens no JSON-RPC
// port). The REST API refuses noauth on every address likewise, unless
// [api] allow_unauthenticated_remote is set.
func TestUnauthenticatedListenersRefuseToStart(t *testing.T) {
	// A database that cannot be opened: a refusal must come first.
	conf := writeConfig(t, "refuse", "postgresql://nobody@127.0.0.1:1/none?connect_timeout=1", 1)
	jsonRPCFix := []string{"[json_rpc] host_ip: 0.0.0.0 is not a loopback address", "[json_rpc] auth_strategy = http_basic",
		"[json_rpc] http_basic_auth_user_file", "[json_rpc] username and password", "use_ssl", "[json_rpc] host_ip = 127.0.0.1"}
	apiFix := []string{"[api] host_ip: 0.0.0.0 is not a loopback address", "[DEFAULT] auth_strategy = http_basic",
		"[api] host_ip = 127.0.0.1", "[api] allow_unauthenticated_remote = true"}
	tests := map[string]struct {
		env      []string
		args     []string
		wantCode int
		want     []string
		dontWant []string
	}{
		"conductor, every address, noauth": {env: []string{"RIVET_JSON_RPC_HOST_IP=0.0.0.0"}, args: []string{"conductor"},
			wantCode: 2, want: jsonRPCFix},
		"conductor, noauth from [json_rpc] though the API has http_basic": {env: []string{"RIVET_JSON_RPC_HOST_IP=0.0.0.0",
			"RIVET_DEFAULT_AUTH_STRATEGY=http_basic", "RIVET_JSON_RPC_AUTH_STRATEGY=noauth"}, args: []string{"conductor"},
			wantCode: 2, want: jsonRPCFix},
		"config check reports it": {env: []string{"RIVET_JSON_RPC_HOST_IP=0.0.0.0"}, args: []string{"config", "check"},
			wantCode: 1, want: jsonRPCFix},
		"config check of an API host does not": {env: []string{"RIVET_JSON_RPC_HOST_IP=0.0.0.0"},
			args: []string{"config", "check", "--service", "api"}, wantCode: 0, want: []string{"configuration OK"}},
		"api, every address, noauth": {env: []string{"RIVET_API_HOST_IP=0.0.0.0"}, args: []string{"api"},
			wantCode: 2, want: apiFix, dontWant: []string{"[json_rpc]"}},
		"config check of a conductor host ignores the REST API": {env: []string{"RIVET_API_HOST_IP=0.0.0.0"},
			args: []string{"config", "check", "--service", "conductor"}, wantCode: 0, want: []string{"configuration OK"}},
		"all-in-one, every address, noauth": {env: []string{"RIVET_API_HOST_IP=0.0.0.0", "RIVET_JSON_RPC_HOST_IP=0.0.0.0"},
			args: []string{"all-in-one"}, wantCode: 2, want: apiFix, dontWant: []string{"[json_rpc]"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, rivetBin, append([]string{"--config-file", conf}, tc.args...)...)
			cmd.Env = append(os.Environ(), tc.env...)
			out, err := cmd.CombinedOutput()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			text := strings.Join(strings.Fields(string(out)), " ")
			if code != tc.wantCode {
				t.Fatalf("exit %d, want %d:\n%s", code, tc.wantCode, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("output does not name %q:\n%s", w, out)
				}
			}
			for _, w := range tc.dontWant {
				if strings.Contains(text, w) {
					t.Errorf("output names %q:\n%s", w, out)
				}
			}
		})
	}
}

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
	rest := func(method, path, body, user string) (int, string, error) {
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-OpenStack-Ironic-API-Version", "1.31")
		if user != "" {
			req.SetBasicAuth(user, restPassword)
		}
		res, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
		if err != nil {
			return 0, "", err
		}
		defer res.Body.Close()
		out, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(out), nil
	}
	if status, body, err := rest(http.MethodGet, "/v1/nodes/"+nodes[0].UUID, "", ""); err != nil || status != http.StatusUnauthorized {
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
					status, body, err := rest(r[0], r[1], r[2], restUser)
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
	do := func(method, path, body string) (int, string) {
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-OpenStack-Ironic-API-Version", "1.31")
		res, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer res.Body.Close()
		out, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(out)
	}
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

// Mutual TLS from `rivet tls init` and `rivet tls issue`: a conductor with
// require_client_certificate and no other authentication serves an API
// that presents its certificate, and no client without one gets past the
// TLS handshake.
func TestJSONRPCMutualTLS(t *testing.T) {
	c := newCluster(t)
	dir := t.TempDir()
	for _, args := range [][]string{{"tls", "init", "--dir", dir}, {"tls", "issue", "--dir", dir, "127.0.0.1"},
		{"tls", "issue", "--dir", dir, "rivet-api"}} {
		if out, err := exec.Command(rivetBin, args...).CombinedOutput(); err != nil {
			t.Fatalf("rivet %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	tlsEnv := func(host string) []string {
		return []string{"RIVET_JSON_RPC_USE_SSL=true", "RIVET_JSON_RPC_CAFILE=" + filepath.Join(dir, "ca.pem"),
			"RIVET_JSON_RPC_CERT_FILE=" + filepath.Join(dir, host+".pem"), "RIVET_JSON_RPC_KEY_FILE=" + filepath.Join(dir, host+"-key.pem"),
			"RIVET_JSON_RPC_REQUIRE_CLIENT_CERTIFICATE=true", "RIVET_JSON_RPC_AUTH_STRATEGY=noauth"}
	}
	p := c.startEnv("a", tlsEnv("127.0.0.1")...)
	apiPort := freePort(t)
	c.startAPI(apiPort, append(tlsEnv("rivet-api"), "RIVET_DEFAULT_HOST=rivet-api")...)

	base := "http://127.0.0.1:" + strconv.Itoa(apiPort)
	do := func(method, path, body string) (int, string) {
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-OpenStack-Ironic-API-Version", "1.31")
		res, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer res.Body.Close()
		out, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(out)
	}
	if status, body := do(http.MethodPost, "/v1/nodes", `{"driver":"fake-hardware","name":"mtls","driver_info":{"fake_password":"`+bmcPassword+`"}}`); status != http.StatusCreated {
		t.Fatalf("POST /v1/nodes through the API (its certificate): %d %s", status, body)
	}

	caPEM, err := os.ReadFile(filepath.Join(dir, "ca.pem"))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)
	apiCert, err := tls.LoadX509KeyPair(filepath.Join(dir, "rivet-api.pem"), filepath.Join(dir, "rivet-api-key.pem"))
	if err != nil {
		t.Fatal(err)
	}
	// A certificate from another CA: what an attacker can make.
	otherDir := t.TempDir()
	for _, args := range [][]string{{"tls", "init", "--dir", otherDir}, {"tls", "issue", "--dir", otherDir, "rivet-api"}} {
		if out, err := exec.Command(rivetBin, args...).CombinedOutput(); err != nil {
			t.Fatalf("rivet %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	foreign, err := tls.LoadX509KeyPair(filepath.Join(otherDir, "rivet-api.pem"), filepath.Join(otherDir, "rivet-api-key.pem"))
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"jsonrpc":"2.0","method":"create_node","params":{},"id":1}`)
	for name, tc := range map[string]struct {
		certs  []tls.Certificate
		wantOK bool
	}{
		"no client certificate":               {},
		"a certificate of another CA":         {certs: []tls.Certificate{foreign}},
		"the API's certificate (the control)": {certs: []tls.Certificate{apiCert}, wantOK: true},
	} {
		client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: tc.certs, MinVersion: tls.VersionTLS12}}}
		res, err := client.Post("https://"+p.name+"/", "application/json", bytes.NewReader(body))
		if tc.wantOK {
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			res.Body.Close()
			continue
		}
		if err == nil {
			out, _ := io.ReadAll(res.Body)
			res.Body.Close()
			t.Errorf("%s: the conductor answered HTTP %d: %s", name, res.StatusCode, out)
		}
	}
}
