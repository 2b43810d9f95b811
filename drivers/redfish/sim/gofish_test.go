package sim

import (
	"errors"
	"net/http"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stmcginnis/gofish"
	"github.com/stmcginnis/gofish/schemas"
)

// These tests drive the simulator with the real gofish v0.23.0 client, the
// one the Redfish driver uses, to prove a client works against it unchanged.

func connect(t *testing.T, g *rig, basic bool, password string) (*gofish.APIClient, error) {
	t.Helper()
	return gofish.Connect(gofish.ClientConfig{
		Endpoint:         g.base,
		Username:         DefaultUsername,
		Password:         password,
		BasicAuth:        basic,
		ReuseConnections: true,
		HTTPClient:       &http.Client{Transport: &http.Transport{}},
	})
}

// redfishError unwraps a *schemas.Error and checks its status and MessageId.
func redfishError(t *testing.T, err error, status int, messageID string) {
	t.Helper()
	var rf *schemas.Error
	if !errors.As(err, &rf) {
		t.Fatalf("error %v (%T) is not a *schemas.Error", err, err)
	}
	if rf.HTTPReturnedStatusCode != status || len(rf.ExtendedInfos) == 0 || rf.ExtendedInfos[0].MessageID != "Base.1.8."+messageID {
		t.Fatalf("got %d %+v, want %d Base.1.8.%s", rf.HTTPReturnedStatusCode, rf.ExtendedInfos, status, messageID)
	}
}

func TestGofishClient(t *testing.T) {
	for name, basic := range map[string]bool{"session auth": false, "basic auth": true} {
		t.Run(name, func(t *testing.T) {
			g := newRig(t, Options{Systems: 3})
			c, err := connect(t, g, basic, DefaultPassword)
			if err != nil {
				t.Fatalf("Connect: %v", err)
			}
			wantSessions := 1
			if basic {
				wantSessions = 0
			}
			if n := g.sim.SessionCount(); n != wantSessions {
				t.Errorf("%d sessions after Connect, want %d", n, wantSessions)
			}

			systems, err := c.GetService().Systems()
			if err != nil {
				t.Fatalf("Systems: %v", err)
			}
			var ids []string
			for _, s := range systems {
				ids = append(ids, s.ID)
			}
			slices.Sort(ids)
			if diff := cmp.Diff([]string{"node-0", "node-1", "node-2"}, ids); diff != "" {
				t.Fatalf("system ids (-want +got):\n%s", diff)
			}
			sys, err := schemas.GetComputerSystem(c, systemPath(0))
			if err != nil {
				t.Fatal(err)
			}
			if sys.PowerState != schemas.OffPowerState || gofish.Deref(sys.ProcessorSummary.Count) < 1 || gofish.Deref(sys.MemorySummary.TotalSystemMemoryGiB) < 1 {
				t.Errorf("system: power %s, summary %+v %+v", sys.PowerState, sys.ProcessorSummary, sys.MemorySummary)
			}

			// Reset sends If-Match with the ETag just read.
			if _, err := sys.Reset(schemas.OnResetType); err != nil {
				t.Fatalf("Reset On: %v", err)
			}
			if st := g.state("node-0"); st.PowerState != PowerOn {
				t.Fatalf("after Reset On: %s", st.PowerState)
			}
			// gofish checks ResetType against the advertised allowable values
			// and sends nothing for one we do not offer.
			if _, err := sys.Reset(schemas.PowerCycleResetType); err == nil {
				t.Error("Reset PowerCycle was accepted")
			}

			// The ETag sys holds is stale now: SetBoot's PATCH gets a 412,
			// as on real BMCs; re-reading the system fixes it.
			boot := &schemas.Boot{BootSourceOverrideTarget: schemas.PxeBootSource,
				BootSourceOverrideEnabled: schemas.OnceBootSourceOverrideEnabled,
				BootSourceOverrideMode:    schemas.UEFIBootSourceOverrideMode}
			redfishError(t, sys.SetBoot(boot), http.StatusPreconditionFailed, "PreconditionFailed")
			if sys, err = schemas.GetComputerSystem(c, sys.ODataID); err != nil {
				t.Fatal(err)
			}
			if err := sys.SetBoot(boot); err != nil {
				t.Fatalf("SetBoot: %v", err)
			}
			if diff := cmp.Diff(BootOverride{"Pxe", "Once", "UEFI"}, g.state("node-0").Boot); diff != "" {
				t.Errorf("boot (-want +got):\n%s", diff)
			}
			// A bad value comes back as a typed Redfish error (after a re-read:
			// the PATCH that just succeeded changed the ETag again).
			if sys, err = schemas.GetComputerSystem(c, sys.ODataID); err != nil {
				t.Fatal(err)
			}
			redfishError(t, sys.SetBoot(&schemas.Boot{BootSourceOverrideTarget: "Floppy"}), http.StatusBadRequest, "PropertyValueNotInList")

			// Reset with a stale ETag: gofish retries once without If-Match.
			if _, err := sys.Reset(schemas.ForceOffResetType); err != nil {
				t.Fatalf("Reset ForceOff: %v", err)
			}
			if st := g.state("node-0"); st.PowerState != PowerOff || st.Resets != 2 {
				t.Fatalf("after ForceOff: %+v", st)
			}

			// The other way round the stale ETag: send no If-Match at all.
			sys.DisableEtagMatch(true)
			if err := sys.SetBoot(&schemas.Boot{BootSourceOverrideTarget: schemas.HddBootSource,
				BootSourceOverrideEnabled: schemas.ContinuousBootSourceOverrideEnabled}); err != nil {
				t.Fatalf("SetBoot without If-Match: %v", err)
			}
			if diff := cmp.Diff(BootOverride{"Hdd", "Continuous", "UEFI"}, g.state("node-0").Boot); diff != "" {
				t.Errorf("boot (-want +got):\n%s", diff)
			}

			mgrs, err := sys.ManagedBy()
			if err != nil || len(mgrs) != 1 || mgrs[0].ID != "BMC-node-0" {
				t.Fatalf("ManagedBy: %v %v", mgrs, err)
			}
			vms, err := mgrs[0].VirtualMedia()
			if err != nil || len(vms) != 2 {
				t.Fatalf("VirtualMedia: %d %v", len(vms), err)
			}
			i := slices.IndexFunc(vms, func(v *schemas.VirtualMedia) bool {
				return slices.Contains(v.MediaTypes, schemas.CDVirtualMediaType)
			})
			if i < 0 || !vms[i].SupportsMediaInsert || !vms[i].SupportsMediaEject {
				t.Fatalf("no CD slot with actions: %+v", vms)
			}
			params := &schemas.VirtualMediaInsertMediaParameters{Image: isoURL, Inserted: gofish.ToRef(true), WriteProtected: gofish.ToRef(true)}
			if _, err := vms[i].InsertMedia(params); err != nil {
				t.Fatalf("InsertMedia: %v", err)
			}
			if m := g.state("node-0").Media[0]; !m.Inserted || m.Image != isoURL {
				t.Errorf("after InsertMedia: %+v", m)
			}
			vm, err := schemas.GetVirtualMedia(c, vms[i].ODataID)
			if err != nil || gofish.Deref(vm.Inserted) != true || vm.Image != isoURL {
				t.Fatalf("re-read media: %+v %v", vm, err)
			}
			redfishError(t, errOnly(vm.InsertMedia(params)), http.StatusConflict, "ResourceInUse")
			if _, err := vm.EjectMedia(); err != nil {
				t.Fatalf("EjectMedia: %v", err)
			}
			if m := g.state("node-0").Media[0]; m.Inserted || m.Image != "" {
				t.Errorf("after EjectMedia: %+v", m)
			}

			c.Logout()
			if n := g.sim.SessionCount(); n != 0 {
				t.Errorf("%d sessions after Logout", n)
			}
		})
	}
}

func errOnly[T any](_ T, err error) error { return err }

func TestGofishWrongPassword(t *testing.T) {
	g := newRig(t, Options{})
	// Session login fails at Connect.
	_, err := connect(t, g, false, "wrong")
	redfishError(t, err, http.StatusUnauthorized, "NoValidSession")
	// Basic auth connects (the root is public) and fails on the first real read.
	c, err := connect(t, g, true, "wrong")
	if err != nil {
		t.Fatalf("Connect with basic auth: %v", err)
	}
	_, err = schemas.GetComputerSystem(c, systemPath(0))
	redfishError(t, err, http.StatusUnauthorized, "NoValidSession")
}
