package conductor

import (
	"bytes"
	"context"
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
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/core/rpc"
	"github.com/rivetmetal/rivet/core/rpc/jsonrpc"
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
		rpc.ObjectCodecFor(reg, pinner), jsonrpc.NewHTTPTransport(jsonrpc.HTTPTransportOptions{Timeout: 5 * time.Second}))
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
			// After 5 failed logins the client is locked out (429, no
			// password checked): a refusal too.
			if status != http.StatusUnauthorized && status != http.StatusTooManyRequests {
				t.Errorf("%s as %q: HTTP %d, want 401 or 429: %s", method, cred.user, status, body)
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

	// The six failed logins above locked this client out for a second or
	// two: the right credentials are served once the lock-out ends.
	status, body := post(t, p.name, bodies["update_node"], auth.user, auth.password)
	for range 5 {
		if status != http.StatusTooManyRequests {
			break
		}
		time.Sleep(time.Second)
		status, body = post(t, p.name, bodies["update_node"], auth.user, auth.password)
	}
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
