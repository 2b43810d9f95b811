package redfish_test

import (
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/rivetmetal/rivet/drivers/redfish"
	"github.com/rivetmetal/rivet/drivers/redfish/sim"
	"github.com/rivetmetal/rivet/plugins"
	"github.com/rivetmetal/rivet/plugins/plugintest"
	"github.com/rivetmetal/rivet/test/testenv"
)

// peer is one BMC the conformance suite runs against: a DMTF mockup served
// by mockupBMC, or rivet-sim with one quirk of a real BMC family.
type peer struct {
	// start brings the BMC up.
	start func(t *testing.T) peerEnv
	// deviations are the suite's cases this peer cannot pass because of
	// what it lacks or how it behaves; each is replaced by a check that
	// the driver handles that exactly as documented.
	deviations map[string]deviation
}

// peerEnv is a running peer.
type peerEnv struct {
	// node is the node of the peer's (first) system.
	node plugins.Node
	// booted says what that system last booted from ("Cd <image>").
	booted func() string
	// inventory is what out-of-band inspection must find, read from the
	// peer's own resources independently of the driver and gofish.
	inventory func(t *testing.T) plugins.Inventory
	// quirk, when set, checks after the run that the peer's quirk was in
	// force (a quirk nobody hit proves nothing).
	quirk func(t *testing.T)
}

// deviation is a documented way a peer differs, with the test of what the
// driver does about it.
type deviation struct {
	why   string
	check func(t *testing.T, d *redfish.Driver, n plugins.Node)
}

// cell results.
const (
	cellPass = "pass"
	cellFail = "FAIL"
)

// TestPeerMatrix runs the shared conformance suite (plugins/plugintest)
// against each DMTF mockup and each rivet-sim quirk, plus an out-of-band
// inspection checked against the peer's own data, and prints the matrix
// (peer × case → pass / deviation / FAIL). A documented deviation is
// asserted by its own check, never skipped.
func TestPeerMatrix(t *testing.T) {
	peers := map[string]peer{}
	for name, p := range quirkPeers() {
		peers["rivet-sim "+name] = p
	}
	mockups := testenv.RedfishMockups
	dir := ""
	if t.Run("mockups present", func(t *testing.T) { dir = testenv.RequireRedfishMockups(t) }) && dir != "" {
		for _, m := range mockups {
			peers["dmtf "+m] = mockupPeer(filepath.Join(dir, m))
		}
		bladed := peers["dmtf public-bladed"]
		bladed.deviations = map[string]deviation{"deploy": {
			why: "no VirtualMedia: refused as not supported",
			check: func(t *testing.T, d *redfish.Driver, n plugins.Node) {
				// A blade without virtual media cannot boot an ISO: the
				// deploy is refused before anything changes, saying why.
				for op, err := range map[string]error{"prepare deploy": d.PrepareDeploy(ctx(t), n), "deploy": d.Deploy(ctx(t), n)} {
					noSecret(t, err)
					if !errors.Is(err, plugins.ErrNotSupported) || !strings.Contains(fmt.Sprint(err), "no virtual media") {
						t.Errorf("%s: %v, want ErrNotSupported saying there is no virtual media", op, err)
					}
				}
			},
		}, "bios": {
			why: "no Bios resource: refused as not supported",
			check: func(t *testing.T, d *redfish.Driver, n plugins.Node) {
				// A blade without a Bios resource has no settings to
				// read: the driver says so rather than reading none.
				_, err := d.GetBIOSSettings(ctx(t), n)
				noSecret(t, err)
				if !errors.Is(err, plugins.ErrNotSupported) || !strings.Contains(fmt.Sprint(err), "no Bios resource") {
					t.Errorf("get BIOS settings: %v, want ErrNotSupported saying there is no Bios resource", err)
				}
			},
		}}
		peers["dmtf public-bladed"] = bladed
	}
	cases := []string{"info", "power", "power v2", "management", "deploy", "inspect", "bios", "firmware", "inventory"}
	var mu sync.Mutex
	matrix := map[string]map[string]string{}
	record := func(p, c, v string) {
		mu.Lock()
		defer mu.Unlock()
		if matrix[p] == nil {
			matrix[p] = map[string]string{}
		}
		matrix[p][c] = v
	}
	names := make([]string, 0, len(peers))
	for n := range peers {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, name := range names {
		p := peers[name]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env := p.start(t)
			n := env.node
			d := newDriver(t, testOptions())
			tgt := plugintest.Direct(t, d)
			for _, c := range plugintest.Cases(tgt, n) {
				if dev, ok := p.deviations[c.Name]; ok {
					ok := t.Run(c.Name+" (deviation)", func(t *testing.T) { dev.check(t, d, n) })
					record(name, c.Name, cond(ok, "dev: "+dev.why, cellFail+" (deviation check)"))
					continue
				}
				skipped := false
				ok := t.Run(c.Name, func(t *testing.T) {
					defer func() { skipped = t.Skipped() }()
					c.Run(t)
				})
				if ok && !skipped && c.Name == "deploy" {
					ok = t.Run("deploy booted the ISO", func(t *testing.T) {
						if got := env.booted(); got != "Cd "+iso {
							t.Errorf("the deploy booted %q, want %q", got, "Cd "+iso)
						}
					})
				}
				record(name, c.Name, cond(skipped, "n/a", cond(ok, cellPass, cellFail)))
			}
			ok := t.Run("inventory", func(t *testing.T) {
				want := env.inventory(t)
				got, err := d.Inspect(ctx(t), n)
				must(t, "inspect", err)
				if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("inventory (-peer's own data +driver):\n%s", diff)
				}
			})
			record(name, "inventory", cond(ok, cellPass, cellFail))
			if env.quirk != nil {
				t.Run("quirk in force", env.quirk)
			}
		})
	}
	t.Cleanup(func() {
		var b strings.Builder
		fmt.Fprintf(&b, "peer matrix (%d peers):\n| peer | %s |\n|---|%s\n", len(matrix), strings.Join(cases, " | "), strings.Repeat("---|", len(cases)))
		for _, name := range names {
			if matrix[name] == nil {
				continue
			}
			row := make([]string, len(cases))
			for i, c := range cases {
				row[i] = cond(matrix[name][c] != "", matrix[name][c], "-")
			}
			fmt.Fprintf(&b, "| %s | %s |\n", name, strings.Join(row, " | "))
		}
		t.Log(b.String())
	})
}

func cond[T any](c bool, a, b T) T {
	if c {
		return a
	}
	return b
}

// quirkPeers are rivet-sim with the habits of BMC families nobody here
// wrote, one at a time.
func quirkPeers() map[string]peer {
	simPeer := func(opts sim.Options, setup func(t *testing.T, b *bmcSim), effect func(t *testing.T, b *bmcSim)) peer {
		return peer{start: func(t *testing.T) peerEnv {
			b := startSim(t, opts)
			if setup != nil {
				setup(t, b)
			}
			booted := func() string {
				st, err := b.System("node-0")
				if err != nil || st.LastBootSource == "" {
					return ""
				}
				return strings.TrimSpace(st.LastBootSource + " " + st.LastBootImage)
			}
			inventory := func(t *testing.T) plugins.Inventory {
				// The same hardware without the quirk, less what only a
				// missing collection knows.
				plain := opts
				plain.Quirks = sim.Quirks{}
				inv := expectedInventory(t, startSim(t, plain), "node-0")
				if slices.Contains(opts.Quirks.MissingCollections, "EthernetInterfaces") {
					inv.NICs = nil
				}
				return inv
			}
			env := peerEnv{node: node(b, "node-0"), booted: booted, inventory: inventory}
			if effect != nil {
				env.quirk = func(t *testing.T) { effect(t, b) }
			}
			return env
		}}
	}
	holdSessions := func(n int) func(t *testing.T, b *bmcSim) {
		return func(t *testing.T, b *bmcSim) {
			for range n {
				b.raw(t, http.MethodPost, "/redfish/v1/SessionService/Sessions",
					map[string]any{"UserName": sim.DefaultUsername, "Password": password}, nil)
			}
		}
	}
	atLeast := func(method, part string, n int) func(t *testing.T, b *bmcSim) {
		return func(t *testing.T, b *bmcSim) {
			if got := b.count(method, part); got < n {
				t.Errorf("%d %s requests to *%s*, want at least %d", got, method, part, n)
			}
		}
	}
	none := func(method, part string) func(t *testing.T, b *bmcSim) {
		return func(t *testing.T, b *bmcSim) {
			if got := b.count(method, part); got != 0 {
				t.Errorf("%d %s requests to *%s*, want none", got, method, part)
			}
		}
	}
	both := func(fs ...func(t *testing.T, b *bmcSim)) func(t *testing.T, b *bmcSim) {
		return func(t *testing.T, b *bmcSim) {
			for _, f := range fs {
				f(t, b)
			}
		}
	}
	sessionsHeld := func(n int) func(t *testing.T, b *bmcSim) {
		return func(t *testing.T, b *bmcSim) {
			if got := b.SessionCount(); got != n {
				t.Errorf("%d sessions live, want the %d held before the run (the driver fell back to basic)", got, n)
			}
		}
	}
	peers := map[string]peer{
		"plain":                  simPeer(sim.Options{SystemVirtualMedia: true}, nil, atLeast("POST", "/Systems/node-0/VirtualMedia/Cd/Actions/", 1)),
		"media under Managers":   simPeer(sim.Options{}, nil, atLeast("POST", "/Managers/BMC-node-0/VirtualMedia/Cd/Actions/", 1)),
		"no SessionService":      simPeer(sim.Options{Quirks: sim.Quirks{NoSessionService: true}}, nil, none("POST", "/SessionService")),
		"power delay 300ms":      simPeer(sim.Options{Quirks: sim.Quirks{PowerDelay: 300 * time.Millisecond}}, nil, nil),
		"no InsertMedia action":  simPeer(sim.Options{Quirks: sim.Quirks{NoMediaActions: true}}, nil, both(atLeast("PATCH", "/VirtualMedia/Cd", 2), none("POST", "/VirtualMedia/"))),
		"Memory 404":             simPeer(sim.Options{Quirks: sim.Quirks{MissingCollections: []string{"Memory"}}}, nil, none("GET", "/Memory")), // MemorySummary first
		"EthernetInterfaces 404": simPeer(sim.Options{Quirks: sim.Quirks{MissingCollections: []string{"EthernetInterfaces"}}}, nil, atLeast("GET", "/EthernetInterfaces", 1)),
		"sessions exhausted 503": simPeer(sim.Options{SessionLimit: 2}, holdSessions(2), sessionsHeld(2)),
		"sessions exhausted 409": simPeer(sim.Options{SessionLimit: 2, Quirks: sim.Quirks{SessionLimitConflict: true}}, holdSessions(2), sessionsHeld(2)),
		"boot always Continuous": simPeer(sim.Options{Quirks: sim.Quirks{BootAlwaysContinuous: true}}, nil, nil),
	}
	p := peers["boot always Continuous"]
	p.deviations = map[string]deviation{"management": {
		why: "Once reads back Continuous",
		check: func(t *testing.T, d *redfish.Driver, n plugins.Node) {
			// The driver reports what the BMC says, as Ironic does: the
			// override is persistent on this BMC, whatever was asked.
			must(t, "set boot device", d.SetBootDevice(ctx(t), n, plugins.BootDeviceSetting{Device: plugins.BootPXE}))
			got, err := d.GetBootDevice(ctx(t), n)
			must(t, "get boot device", err)
			if got.Device != plugins.BootPXE || !got.Persistent {
				t.Errorf("boot device %+v, want pxe reported persistent (the BMC's truth)", got)
			}
			must(t, "inject NMI", errors.Join(d.SetPowerState(ctx(t), n, plugins.PowerOn), d.InjectNMI(ctx(t), n)))
		},
	}}
	peers["boot always Continuous"] = p
	return peers
}

// mockupPeer serves one DMTF mockup; its first system is the node's.
func mockupPeer(dir string) peer {
	p := peer{start: func(t *testing.T) peerEnv {
		m := startMockup(t, dir)
		systems := m.systems()
		if len(systems) == 0 {
			t.Fatal("mockup has no system")
		}
		sys := systems[0]
		n := plugins.Node{UUID: "uuid-" + filepath.Base(dir), HardwareType: redfish.HardwareType,
			DriverInfo: plugins.DriverInfo{
				redfish.KeyAddress: m.URL, redfish.KeySystemID: sys,
				redfish.KeyUsername: "admin", redfish.KeyPassword: password,
			},
			InstanceInfo: map[string]any{redfish.KeyBootISO: iso}}
		return peerEnv{node: n, booted: func() string { return m.booted(sys) },
			inventory: func(t *testing.T) plugins.Inventory { return m.inventory(t, sys) }}
	}}
	return p
}
