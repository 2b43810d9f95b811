package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/core/version"
)

// recordingTransport keeps every request and answers null.
type recordingTransport struct {
	mu   sync.Mutex
	reqs []*Request
}

func (r *recordingTransport) Send(_ context.Context, _ string, req *Request) (json.RawMessage, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reqs = append(r.reqs, req)
	return nil, nil
}

func (r *recordingTransport) take() []*Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.reqs
	r.reqs = nil
	return out
}

// pinnerAt01 is a Pinner pinned to release 0.1: the default table's entry
// once it records one, else an entry like it (REST API 1.26, RPC 1.0) under
// the code's HEAD.
func pinnerAt01(t *testing.T) *release.Pinner {
	t.Helper()
	tbl := release.Default()
	if _, ok := tbl.Lookup("0.1"); !ok {
		head := tbl.Head()
		old := head
		old.Version, old.Name, old.API, old.RPC, old.ServiceVersion = "0.1", "anvil", v("1.26"), v("1.0"), 1
		var err error
		if tbl, err = release.NewTable(head, old); err != nil {
			t.Fatal(err)
		}
	}
	pin, err := tbl.ParsePin("0.1")
	if err != nil {
		t.Fatal(err)
	}
	pn := release.NewPinner(tbl, pin)
	if e := pn.Effective(); e.RPC != v("1.0") || e.API != v("1.26") {
		t.Fatalf("release 0.1 speaks RPC %s and API %s; this test is about RPC 1.0 and API 1.26", e.RPC, e.API)
	}
	return pn
}

// TestPowerPinnedTo01: pinned to release 0.1 (RPC 1.0), ChangeNodePowerState
// never sends a timeout or a soft target: both are refused with *CapError
// (the REST API's 406) before anything is sent, while a hard action goes
// out at 1.0 without a timeout key. Unpinned (SIGHUP), the same calls go
// out at 1.1.
func TestPowerPinnedTo01(t *testing.T) {
	pn := pinnerAt01(t)
	rec := &recordingTransport{}
	lister := func(context.Context) ([]ConductorInfo, error) {
		return []ConductorInfo{{Hostname: "c1", HardwareTypes: []string{"fake-hardware"}}}, nil
	}
	api := ConductorAPI{
		Client: NewClient(ConductorMethods(), func() version.Version { return pn.Effective().RPC }, PlainCodec{}, rec),
		Router: NewRouter(lister, 5, time.Hour),
	}
	n := &objects.Node{UUID: "1be26c0b-03f2-4d2e-ae87-c02d7f33c123", Driver: "fake-hardware"}
	ctx := context.Background()
	type call struct {
		state   string
		timeout int
	}
	refused := []call{{"power on", 30}, {"soft power off", 0}, {"soft rebooting", 0}, {"soft power off", 60}}
	for _, c := range refused {
		err := api.ChangeNodePowerState(ctx, n, c.state, c.timeout)
		var ce *CapError
		if !errors.As(err, &ce) || ce.HTTPCode() != 406 || ce.Cap != v("1.0") || ce.Needs != v("1.1") {
			t.Errorf("pinned %v: err = %v, want a *CapError needing 1.1 under cap 1.0", c, err)
		}
	}
	if got := rec.take(); len(got) != 0 {
		t.Fatalf("pinned: %d requests sent for refused calls", len(got))
	}
	if err := api.ChangeNodePowerState(ctx, n, "power off", 0); err != nil {
		t.Fatal(err)
	}
	got := rec.take()
	if len(got) != 1 || got[0].Version != "1.0" {
		t.Fatalf("pinned hard power off sent %+v, want one request at 1.0", got)
	}
	if _, sent := got[0].Params["timeout"]; sent {
		t.Errorf("pinned: timeout sent: %s", got[0].Params["timeout"])
	}

	pn.Set(release.Pin{Mode: release.PinLatest}, nil) // SIGHUP: unpinned
	for _, c := range refused {
		if err := api.ChangeNodePowerState(ctx, n, c.state, c.timeout); err != nil {
			t.Fatalf("unpinned %v: %v", c, err)
		}
	}
	for i, req := range rec.take() {
		if req.Version != "1.1" {
			t.Errorf("unpinned %v sent at %s, want 1.1", refused[i], req.Version)
		}
		_, sent := req.Params["timeout"]
		if want := refused[i].timeout != 0; sent != want {
			t.Errorf("unpinned %v: timeout sent %v, want %v", refused[i], sent, want)
		}
	}
}

// TestReleasesWithSoftPowerSpeakRPC1_1: a release serving REST API 1.27 (soft
// power, timeouts) must speak RPC 1.1, which carries them; otherwise its
// API would accept what its pinned RPC client refuses.
func TestReleasesWithSoftPowerSpeakRPC1_1(t *testing.T) {
	for _, e := range release.Default().All() {
		if !e.API.Less(v("1.27")) && e.RPC.Less(v1_1) {
			t.Errorf("release %s serves API %s but speaks RPC %s", e.Label(), e.API, e.RPC)
		}
	}
	m, _ := ConductorMethods().Lookup("change_node_power_state")
	a, _ := m.Arg("timeout")
	if a.Since != v1_1 || a.Policy != RefuseAboveCap {
		t.Errorf("timeout since %s policy %v, want 1.1 refused above the cap", a.Since, a.Policy)
	}
	ns, _ := m.Arg("new_state")
	for _, s := range []string{"soft power off", "soft rebooting"} {
		if ns.Values[s] != v1_1 {
			t.Errorf("new_state %q since %s, want 1.1", s, ns.Values[s])
		}
	}
}

// TestPowerMatrix: change_node_power_state against clients capped at each
// RPC version and conductors of each version. A soft target or a timeout
// needs 1.1: a capped client refuses it before sending (*CapError), an
// unpinned client reaching a 1.0 conductor gets UnsupportedVersion (never a
// misread target); a hard action without a timeout goes out at 1.0 to all.
func TestPowerMatrix(t *testing.T) {
	calls := []struct {
		args  map[string]any
		needs string
	}{
		{map[string]any{"node_id": "n1", "new_state": "power on"}, "1.0"},
		{map[string]any{"node_id": "n1", "new_state": "soft power off"}, "1.1"},
		{map[string]any{"node_id": "n1", "new_state": "soft rebooting", "timeout": 60}, "1.1"},
		{map[string]any{"node_id": "n1", "new_state": "rebooting", "timeout": 60}, "1.1"},
	}
	versions := []string{"1.0", "1.1", APIVersion.String()}
	for _, capS := range versions {
		for _, serverS := range versions {
			t.Run(fmt.Sprintf("cap %s/server %s", capS, serverS), func(t *testing.T) {
				capV, serverV := v(capS), v(serverS)
				srv := echoServer(t, methodsAt(t, serverV))
				c := NewClient(ConductorMethods(), func() version.Version { return capV }, PlainCodec{}, LocalTransport{Server: srv})
				for _, call := range calls {
					needs := v(call.needs)
					reply, err := c.Call(context.Background(), "local", "change_node_power_state", call.args)
					var ce *CapError
					var re *RemoteError
					switch {
					case !needs.ServedBy(capV):
						if !errors.As(err, &ce) || ce.Needs != needs {
							t.Errorf("%v under cap %s: %v, want a CapError", call.args, capV, err)
						}
					case !needs.ServedBy(serverV):
						if !errors.As(err, &re) || re.Class != "UnsupportedVersion" {
							t.Errorf("%v to a %s conductor: %v, want UnsupportedVersion", call.args, serverV, err)
						}
					case err != nil:
						t.Errorf("%v: %v", call.args, err)
					default:
						var got map[string]any
						if err := reply.Decode(&got); err != nil {
							t.Fatal(err)
						}
						_, sentTimeout := call.args["timeout"]
						if got["version"] != needs.String() || (got["timeout"] == true) != sentTimeout {
							t.Errorf("%v arrived as %v, want version %s", call.args, got, needs)
						}
					}
				}
			})
		}
	}
}
