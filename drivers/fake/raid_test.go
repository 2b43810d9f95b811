package fake_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/rivetmetal/rivet/drivers/fake"
	"github.com/rivetmetal/rivet/plugins"
	"github.com/rivetmetal/rivet/plugins/plugintest"
)

// TestRAIDOverTheProtocol: raid interface version 1 travels on protocol
// 2's RAID service (logical disks as Ironic's documents); a host that
// negotiated protocol 1, as an older plugin forces, has no raid: the call
// answers ErrNotSupported naming the protocol it needs, without a crash.
func TestRAIDOverTheProtocol(t *testing.T) {
	ctx := context.Background()
	n := plugins.Node{UUID: "1be26c0b-03f2-4d2e-ae87-c02d7f33c123"}
	tgt := plugintest.InProcess(t, fake.New(nil))
	r := tgt.Driver.(plugins.RAIDInterface)
	created, err := r.CreateRAIDConfiguration(ctx, n, []plugins.LogicalDisk{
		{"size_gb": float64(100), "raid_level": "1", "is_root_volume": true},
		{"size_gb": "MAX", "raid_level": "5"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(created) != 2 || created[0]["size_gb"] != float64(100) || created[1]["size_gb"] != float64(3900) || created[0]["controller"] != "fake-controller" {
		t.Fatalf("created %v", created)
	}
	if got, err := r.GetRAIDConfiguration(ctx, n); err != nil || len(got) != 2 {
		t.Fatalf("get: %v, %v", got, err)
	}
	if _, err := r.CreateRAIDConfiguration(ctx, n, []plugins.LogicalDisk{{"size_gb": float64(1), "raid_level": "0"}}); err == nil {
		t.Error("a volume beyond the disks' capacity was created")
	}
	if err := r.DeleteRAIDConfiguration(ctx, n); err != nil {
		t.Fatal(err)
	}
	if got, _ := r.GetRAIDConfiguration(ctx, n); len(got) != 0 {
		t.Errorf("after delete: %v", got)
	}

	old := plugintest.InProcessAt(t, fake.New(nil), 1)
	if _, ok := old.Info.Interfaces[plugins.InterfaceRAID]; ok {
		t.Fatalf("raid negotiated at protocol 1: %v", old.Info.Interfaces)
	}
	_, err = old.Driver.(plugins.RAIDInterface).CreateRAIDConfiguration(ctx, n, []plugins.LogicalDisk{{"size_gb": float64(1), "raid_level": "0"}})
	if !errors.Is(err, plugins.ErrNotSupported) || !strings.Contains(err.Error(), "raid needs plugin protocol 2") {
		t.Errorf("raid at protocol 1: %v, want ErrNotSupported naming protocol 2", err)
	}
}
