package bootserver_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/rivetmetal/rivet/core/conductor"
	"github.com/rivetmetal/rivet/core/conductor/bootserver"
	"github.com/rivetmetal/rivet/core/conductor/powersync"
	"github.com/rivetmetal/rivet/core/conductor/workers"
	"github.com/rivetmetal/rivet/core/config"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
	"github.com/rivetmetal/rivet/drivers/fake"
)

const mac = "52:54:00:aa:bb:01"

// activeNode stores a node in active (a ramdisk deploy's instance is the
// ramdisk; deploying without a lease would be failed by the conductor's
// orphan check at Start) with a kernel and ramdisk and a port with mac,
// on a fresh SQLite database.
func activeNode(t *testing.T) (*db.Store, *objects.Node) {
	t.Helper()
	reg := objects.NewRegistry()
	if err := objects.Install(reg); err != nil {
		t.Fatal(err)
	}
	store := db.NewStore(dbtest.Open(t, db.SQLite), reg, release.NewPinner(release.Default(), release.Pin{Mode: release.PinLatest}))
	ctx := context.Background()
	n := &objects.Node{UUID: uuid.NewString(), Driver: fake.HardwareType, ProvisionState: "active",
		DriverInfo:   map[string]any{"ipmi_password": "SECRET"},
		InstanceInfo: map[string]any{"kernel": "http://images.example/k", "ramdisk": "http://images.example/r"}}
	if err := store.Create(ctx, n); err != nil {
		t.Fatal(err)
	}
	if err := store.Create(ctx, &objects.Port{UUID: uuid.NewString(), Address: mac, NodeID: n.ID, PXEEnabled: true}); err != nil {
		t.Fatal(err)
	}
	return store, n
}

func TestStoreSource(t *testing.T) {
	store, n := activeNode(t)
	src := bootserver.StoreSource{Store: store}
	want := bootserver.Node{UUID: n.UUID, ProvisionState: "active", InstanceInfo: n.InstanceInfo}
	tests := map[string]struct {
		lookup  func(context.Context) (bootserver.Node, error)
		wantErr error
	}{
		"by UUID":      {lookup: func(ctx context.Context) (bootserver.Node, error) { return src.NodeByUUID(ctx, n.UUID) }},
		"by MAC":       {lookup: func(ctx context.Context) (bootserver.Node, error) { return src.NodeByMAC(ctx, mac) }},
		"unknown UUID": {lookup: func(ctx context.Context) (bootserver.Node, error) { return src.NodeByUUID(ctx, uuid.NewString()) }, wantErr: bootserver.ErrNotFound},
		"unknown MAC":  {lookup: func(ctx context.Context) (bootserver.Node, error) { return src.NodeByMAC(ctx, "52:54:00:aa:bb:02") }, wantErr: bootserver.ErrNotFound},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := tc.lookup(context.Background())
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if tc.wantErr != nil {
				return
			}
			if got.UUID != want.UUID || got.ProvisionState != want.ProvisionState || got.InstanceInfo["kernel"] != "http://images.example/k" {
				t.Errorf("got %+v, want %+v", got, want)
			}
		})
	}
}

func serviceConfig(bootAddr string) conductor.Config {
	ps := powersync.DefaultConfig()
	ps.Interval = 0
	return conductor.Config{
		Hostname: "boot-test", HeartbeatInterval: 50 * time.Millisecond, HeartbeatTimeout: time.Second,
		LeaseDuration: time.Second, LockRetryAttempts: 1, LockRetryInterval: 10 * time.Millisecond,
		CheckInterval: time.Hour, GracefulShutdownTimeout: time.Second, HashPartitionExponent: 5,
		RingResetInterval: time.Hour, Workers: workers.Config{Size: 2, ReservedForAPI: 1}, PowerSync: ps,
		BootHTTPAddress: bootAddr,
	}
}

// TestServiceBootServer: with boot_http_address the conductor answers
// iPXE requests from Start until Stop; without it, it listens nowhere.
func TestServiceBootServer(t *testing.T) {
	store, n := activeNode(t)
	newService := func(bootAddr string) *conductor.Service {
		svc, err := conductor.New(serviceConfig(bootAddr), conductor.Deps{Store: store,
			Drivers: conductor.StaticDrivers{fake.HardwareType: fake.New(nil)}, Pinner: release.NewPinner(release.Default(), release.Pin{Mode: release.PinLatest})})
		if err != nil {
			t.Fatal(err)
		}
		return svc
	}
	ctx := context.Background()

	off := newService("")
	if err := off.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if addr := off.BootAddr(); addr != "" {
		t.Errorf("BootAddr = %q without boot_http_address", addr)
	}
	if err := off.Stop(ctx); err != nil {
		t.Fatal(err)
	}

	svc := newService("127.0.0.1:0")
	if err := svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = svc.Stop(ctx)
		}
	})
	base := "http://" + svc.BootAddr() + "/ipxe/"
	if svc.BootAddr() == "" || strings.HasSuffix(svc.BootAddr(), ":0") {
		t.Fatalf("BootAddr = %q, want the bound address", svc.BootAddr())
	}
	client := &http.Client{Timeout: 5 * time.Second}
	for _, ident := range []string{mac, n.UUID} {
		code, body, err := get(client, base+ident)
		if err != nil || code != http.StatusOK || !strings.Contains(body, "\nkernel http://images.example/k initrd=ramdisk\n") {
			t.Errorf("GET %s: %d %q %v", ident, code, body, err)
		}
		if strings.Contains(body, "SECRET") {
			t.Errorf("GET %s: driver_info reached the script:\n%s", ident, body)
		}
	}
	if code, _, err := get(client, base+uuid.NewString()); err != nil || code != http.StatusNotFound {
		t.Errorf("GET unknown UUID: %d %v, want 404", code, err)
	}

	if err := svc.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	stopped = true
	client.CloseIdleConnections()
	if code, _, err := get(client, base+mac); err == nil {
		t.Errorf("GET after Stop answered %d, want a refused connection", code)
	}
}

func get(c *http.Client, url string) (int, string, error) {
	resp, err := c.Get(url)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// TestBootHTTPAddressOption: [conductor] boot_http_address is off by
// default, checked as host:port and reaches conductor.Config.
func TestBootHTTPAddressOption(t *testing.T) {
	tests := map[string]struct {
		value   string
		problem string // in config.Validate's error; "" for valid
	}{
		"default off":   {value: ""},
		"IPv4":          {value: "192.0.2.10:8088"},
		"every address": {value: ":8088"},
		"IPv6":          {value: "[fd00::1]:8088"},
		"no port":       {value: "192.0.2.10", problem: `[conductor] boot_http_address: "192.0.2.10" is not host:port`},
		"named port":    {value: "192.0.2.10:http", problem: `[conductor] boot_http_address: "192.0.2.10:http": port "http" is not a number from 0 to 65535`},
		"port too big":  {value: ":70000", problem: `port "70000" is not a number from 0 to 65535`},
		"empty port":    {value: "192.0.2.10:", problem: `port "" is not a number`},
	}
	if got := config.Default().Conductor.BootHTTPAddress; got != "" {
		t.Errorf("default boot_http_address = %q, want empty (disabled)", got)
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := config.Default()
			c.Conductor.BootHTTPAddress = tc.value
			err := c.Validate()
			switch {
			case tc.problem == "" && err != nil:
				t.Fatalf("Validate: %v", err)
			case tc.problem != "" && (err == nil || !strings.Contains(err.Error(), tc.problem)):
				t.Fatalf("Validate = %v, want %q", err, tc.problem)
			case tc.problem == "":
				if got := conductor.ConfigFrom(c).BootHTTPAddress; got != tc.value {
					t.Errorf("ConfigFrom: BootHTTPAddress = %q, want %q", got, tc.value)
				}
			}
		})
	}
	bad := serviceConfig("192.0.2.10")
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "boot_http_address") {
		t.Errorf("conductor.Config.Validate = %v, want a boot_http_address problem", err)
	}
}

// A direct-deploy node boots the agent's kernel and ramdisk from
// driver_info while the agent works on it (deploying, cleaning), and its
// disk otherwise.
func TestStoreSourceDirectDeploy(t *testing.T) {
	store, n := activeNode(t)
	n.DeployInterface = ptr("direct")
	n.DriverInfo = map[string]any{"deploy_kernel": "http://images.example/ipa.kernel", "deploy_ramdisk": "http://images.example/ipa.initramfs",
		"kernel_append_params": "ipa-api-url=http://10.0.0.1:6385"}
	src := bootserver.StoreSource{Store: store}
	for st, agent := range map[string]bool{"wait call-back": true, "clean wait": true, "active": false, "available": false} {
		n.ProvisionState = st
		if err := store.Save(context.Background(), n); err != nil {
			t.Fatal(err)
		}
		got, err := src.NodeByMAC(context.Background(), mac)
		if err != nil {
			t.Fatal(err)
		}
		script, err := bootserver.Render(got)
		if err != nil {
			t.Fatalf("%s: %v", st, err)
		}
		booted := strings.Contains(script.Body, "kernel http://images.example/ipa.kernel initrd=ramdisk ipa-api-url=http://10.0.0.1:6385")
		if booted != agent || strings.Contains(script.Body, "images.example/k ") {
			t.Errorf("%s: script\n%s", st, script.Body)
		}
	}
}

// A node of the agent rescue interface boots the rescue kernel and
// ramdisk from rescuing until unrescue, whatever its deploy interface.
func TestStoreSourceAgentRescue(t *testing.T) {
	for _, deploy := range []string{"direct", "ramdisk"} {
		store, n := activeNode(t)
		n.DeployInterface, n.RescueInterface = ptr(deploy), ptr("agent")
		n.DriverInfo = map[string]any{"deploy_kernel": "http://images.example/ipa.kernel", "deploy_ramdisk": "http://images.example/ipa.initramfs",
			"rescue_kernel": "http://images.example/rescue.kernel", "rescue_ramdisk": "http://images.example/rescue.initramfs"}
		src := bootserver.StoreSource{Store: store}
		for _, st := range []string{"rescuing", "rescue wait", "rescue", "unrescuing", "active"} {
			n.ProvisionState = st
			if err := store.Save(context.Background(), n); err != nil {
				t.Fatal(err)
			}
			got, err := src.NodeByMAC(context.Background(), mac)
			if err != nil {
				t.Fatal(err)
			}
			script, err := bootserver.Render(got)
			if err != nil {
				t.Fatalf("%s %s: %v", deploy, st, err)
			}
			rescue := st == "rescuing" || st == "rescue wait" || st == "rescue"
			booted := strings.Contains(script.Body, "kernel http://images.example/rescue.kernel initrd=ramdisk") &&
				strings.Contains(script.Body, "initrd --name ramdisk http://images.example/rescue.initramfs")
			if booted != rescue || strings.Contains(script.Body, "ipa.kernel") {
				t.Errorf("%s deploy, %s: script\n%s", deploy, st, script.Body)
			}
		}
	}
}

func ptr[T any](v T) *T { return &v }
