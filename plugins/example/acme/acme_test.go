package acme_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/rivetmetal/rivet/plugins"
	"github.com/rivetmetal/rivet/plugins/example/acme"
	"github.com/rivetmetal/rivet/plugins/host"
	"github.com/rivetmetal/rivet/plugins/plugintest"
)

var pluginBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "acme-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	pluginBin, err = plugintest.Build(dir, "github.com/rivetmetal/rivet/plugins/example/cmd/rivet-driver-acme", "rivet-driver-acme")
	code := 1
	if err == nil {
		code = m.Run()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// fakeBMC is an Acme BMC: one power state, basic auth admin/pw.
func fakeBMC(t *testing.T) *httptest.Server {
	var mu sync.Mutex
	state := "off"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "admin" || p != "pw" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		switch r.Method + " " + r.URL.Path {
		case "GET /power":
			json.NewEncoder(w).Encode(map[string]string{"state": state})
		case "PUT /power":
			var body struct{ State string }
			json.NewDecoder(r.Body).Decode(&body)
			state = body.State
		case "POST /reset":
			state = "on"
		case "GET /busy":
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func node(addr, password string) plugins.Node {
	return plugins.Node{UUID: "n1", DriverInfo: plugins.DriverInfo{
		acme.KeyAddress: addr, acme.KeyUsername: "admin", acme.KeyPassword: password}}
}

// TestConformance runs the SDK's suite at all three levels.
func TestConformance(t *testing.T) {
	bmc := fakeBMC(t)
	levels := map[string]func(t *testing.T) plugintest.Target{
		"direct":     func(t *testing.T) plugintest.Target { return plugintest.Direct(t, acme.New(nil, nil)) },
		"in-process": func(t *testing.T) plugintest.Target { return plugintest.InProcess(t, acme.New(nil, nil)) },
		"subprocess": func(t *testing.T) plugintest.Target {
			return plugintest.Subprocess(t, host.Command{Path: pluginBin}, "acme")
		},
	}
	for name, level := range levels {
		t.Run(name, func(t *testing.T) { plugintest.Run(t, level(t), node(bmc.URL, "pw")) })
	}
}

// TestErrors checks each failure reaches the host with its kind and
// retry-ability, through the gRPC boundary.
func TestErrors(t *testing.T) {
	bmc := fakeBMC(t)
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	tgt := plugintest.InProcess(t, acme.New(nil, nil))
	getter := tgt.Driver.(plugins.PowerStateGetter)
	tests := map[string]struct {
		node      plugins.Node
		is        error
		retryable bool
		mentions  string
	}{
		"missing keys": {plugins.Node{UUID: "n1", DriverInfo: plugins.DriverInfo{acme.KeyAddress: bmc.URL}}, plugins.ErrInvalidDriverInfo, false, "acme_username, acme_password"},
		"bad address":  {node("ftp://x", "pw"), plugins.ErrInvalidDriverInfo, false, acme.KeyAddress},
		"bad password": {node(bmc.URL, "wrong-pw"), plugins.ErrInvalidDriverInfo, false, acme.KeyPassword},
		"BMC down":     {node(dead.URL, "pw"), plugins.ErrBMCUnreachable, true, "get power state"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := getter.GetPowerState(context.Background(), tc.node)
			if !errors.Is(err, tc.is) || plugins.IsRetryable(err) != tc.retryable {
				t.Fatalf("error %v (retryable %v), want %v (retryable %v)", err, plugins.IsRetryable(err), tc.is, tc.retryable)
			}
			if !strings.Contains(err.Error(), tc.mentions) {
				t.Errorf("error %q does not mention %q", err, tc.mentions)
			}
			if strings.Contains(err.Error(), "wrong-pw") {
				t.Errorf("error leaks the password: %v", err)
			}
		})
	}
}
