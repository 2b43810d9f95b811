package api

import (
	"net/http"
	"slices"
	"testing"

	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/core/version"
)

// TestV1_27SoftPower: PUT /v1/nodes/{id}/states/power at 1.26 and 1.27, as
// Ironic's NodeStatesController.power answers: a soft target or a non-zero
// timeout below 1.27 is 406 (a timeout of 0 or null is not, Python's
// truthiness), the timeout is read as args.integer (Python's int()) before
// that, and a timeout below 1 is 400 at any version.
func TestV1_27SoftPower(t *testing.T) {
	const notAcceptable = "Request not acceptable."
	tests := map[string]struct {
		body  map[string]any
		at126 int // status at 1.26
		at127 int // status at 1.27
		fault string
		call  string // what the conductor got at 1.27; "" none
	}{
		"soft power off":          {map[string]any{"target": "soft power off"}, 406, 202, "", "change_node_power_state soft power off"},
		"soft rebooting":          {map[string]any{"target": "soft rebooting"}, 406, 202, "", "change_node_power_state soft rebooting"},
		"soft with timeout":       {map[string]any{"target": "soft power off", "timeout": 120}, 406, 202, "", "change_node_power_state soft power off timeout=120"},
		"hard with timeout":       {map[string]any{"target": "power on", "timeout": 10}, 406, 202, "", "change_node_power_state power on timeout=10"},
		"reboot with timeout":     {map[string]any{"target": "rebooting", "timeout": 10}, 406, 202, "", "change_node_power_state rebooting timeout=10"},
		"hard without timeout":    {map[string]any{"target": "power off"}, 202, 202, "", "change_node_power_state power off"},
		"timeout null":            {map[string]any{"target": "power off", "timeout": nil}, 202, 202, "", "change_node_power_state power off"},
		"timeout zero":            {map[string]any{"target": "power on", "timeout": 0}, 400, 400, "timeout has to be positive integer", ""},
		"timeout negative":        {map[string]any{"target": "power on", "timeout": -5}, 406, 400, "timeout has to be positive integer", ""},
		"timeout a fraction":      {map[string]any{"target": "power on", "timeout": 2.9}, 406, 202, "", "change_node_power_state power on timeout=2"},
		"timeout below one":       {map[string]any{"target": "power on", "timeout": 0.5}, 400, 400, "timeout has to be positive integer", ""},
		"timeout as a string":     {map[string]any{"target": "power on", "timeout": " 3_0 "}, 406, 202, "", "change_node_power_state power on timeout=30"},
		"timeout true":            {map[string]any{"target": "power on", "timeout": true}, 406, 202, "", "change_node_power_state power on timeout=1"},
		"timeout not a number":    {map[string]any{"target": "power on", "timeout": "abc"}, 400, 400, "Expected an integer for timeout: abc", ""},
		"timeout a float string":  {map[string]any{"target": "power on", "timeout": "1.5"}, 400, 400, "Expected an integer for timeout: 1.5", ""},
		"timeout a list":          {map[string]any{"target": "power on", "timeout": []int{1}}, 400, 400, "Expected an integer for timeout: [1]", ""},
		"timeout too large":       {map[string]any{"target": "power on", "timeout": 1e10}, 400, 400, "Expected an integer for timeout: 10000000000", ""},
		"unknown soft target":     {map[string]any{"target": "soft bogus", "timeout": 5}, 406, 400, `The requested action "soft bogus" can not be performed on node "n1" while it is in state "None".`, ""},
		"unknown attribute":       {map[string]any{"target": "soft power off", "force": true}, 400, 400, "Unknown attribute for argument target: force", ""},
		"target missing, timeout": {map[string]any{"timeout": 5}, 400, 400, "Invalid input for field/attribute target. Value: 'None'. Mandatory field missing.", ""},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			e.node(map[string]any{"name": "n1"})
			for _, v := range []struct {
				ver  string
				want int
			}{{"1.26", tc.at126}, {"1.27", tc.at127}} {
				before := len(e.cond.calls)
				r := e.must(v.want, "PUT", "/v1/nodes/n1/states/power", v.ver, tc.body)
				switch {
				case v.want == 406:
					if got := r.Fault(t); got != notAcceptable {
						t.Errorf("@%s fault %q, want %q", v.ver, got, notAcceptable)
					}
				case v.want == 400 && tc.fault != "":
					if got := r.Fault(t); got != tc.fault {
						t.Errorf("@%s fault %q, want %q", v.ver, got, tc.fault)
					}
				}
				calls := e.cond.calls[before:]
				if v.want != 202 && len(calls) != 0 {
					t.Errorf("@%s refused (%d) but the conductor got %v", v.ver, v.want, calls)
				}
				if v.ver == "1.27" && tc.call != "" && !slices.Equal(calls, []string{tc.call}) {
					t.Errorf("@1.27 the conductor got %v, want [%s]", calls, tc.call)
				}
			}
		})
	}
}

// TestSoftPowerWhileCleaning: soft targets are refused while cleaning, as
// the hard ones are.
func TestSoftPowerWhileCleaning(t *testing.T) {
	e := newEnv(t)
	id := e.node(map[string]any{"name": "n1"})
	if _, err := e.store.DB().Bun().NewUpdate().Table("nodes").Set("provision_state = 'cleaning'").
		Where("uuid = ?", id).Exec(t.Context()); err != nil {
		t.Fatal(err)
	}
	got := e.must(http.StatusBadRequest, "PUT", "/v1/nodes/n1/states/power", "1.27", map[string]any{"target": "soft rebooting", "timeout": 60}).Fault(t)
	if want := `The requested action "soft rebooting" can not be performed on node "n1" while it is in state "cleaning".`; got != want {
		t.Errorf("fault %q, want %q", got, want)
	}
}

// TestSoftPowerPinnedTo01: pinned to release 0.1, the API's maximum is
// 1.26, so 1.27 is refused by the microversion check and "latest" means
// 1.26: soft targets and timeouts never reach the conductor.
func TestSoftPowerPinnedTo01(t *testing.T) {
	tbl := release.Default()
	if _, ok := tbl.Lookup("0.1"); !ok { // until the table records 0.1
		head := tbl.Head()
		old := head
		old.Version, old.Name, old.API, old.RPC, old.ServiceVersion = "0.1", "anvil", mv("1.26"), mv("1.0"), 1
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
	if pn.Effective().API != (version.Version{Major: 1, Minor: 26}) {
		t.Fatalf("release 0.1 serves API %s; this test is about 1.26", pn.Effective().API)
	}
	e := newEnvPinned(t, pn)
	e.node(map[string]any{"name": "n1"})
	e.must(http.StatusNotAcceptable, "PUT", "/v1/nodes/n1/states/power", "1.27", map[string]any{"target": "soft power off"})
	for _, body := range []map[string]any{{"target": "soft power off"}, {"target": "power on", "timeout": 30}} {
		if got := e.must(http.StatusNotAcceptable, "PUT", "/v1/nodes/n1/states/power", "latest", body).Fault(t); got != "Request not acceptable." {
			t.Errorf("%v @latest: %q", body, got)
		}
	}
	for _, c := range e.cond.calls {
		if c != "create_node" {
			t.Errorf("pinned to 0.1, the conductor got %q", c)
		}
	}
	pn.Set(release.Pin{Mode: release.PinLatest}, nil) // SIGHUP: unpinned
	e.must(http.StatusAccepted, "PUT", "/v1/nodes/n1/states/power", "latest", map[string]any{"target": "soft power off"})
}
