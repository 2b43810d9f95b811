package redfish_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rivetmetal/rivet/drivers/redfish/sim"
	"github.com/rivetmetal/rivet/plugins"
	"github.com/rivetmetal/rivet/test/testenv"
)

// simDrives reads the drives' capacities of system id from the simulator.
func simDrives(t *testing.T, b *bmcSim, id string) []int64 {
	t.Helper()
	var st struct {
		Drives []struct {
			ID string `json:"@odata.id"`
		}
	}
	b.raw(t, "GET", "/redfish/v1/Systems/"+id+"/Storage/1", nil, &st)
	var out []int64
	for _, d := range st.Drives {
		var drive struct{ CapacityBytes int64 }
		b.raw(t, "GET", d.ID, nil, &drive)
		out = append(out, drive.CapacityBytes)
	}
	return out
}

// TestRAIDAgainstSim: the driver creates volumes on rivet-sim by POST to
// its Volumes collection (a root RAID1 of a fixed size first, then a MAX
// RAID0 on what is left), reads them back as raid_config's logical disks,
// refuses what the hardware cannot give, and deletes them all.
func TestRAIDAgainstSim(t *testing.T) {
	b := startSim(t, sim.Options{Systems: 16})
	d := newDriver(t, testOptions())
	id := ""
	for _, sid := range b.SystemIDs() {
		if len(simDrives(t, b, sid)) == 3 {
			id = sid
			break
		}
	}
	if id == "" {
		t.Fatal("no simulated system has 3 drives")
	}
	n := node(b, id)
	caps := simDrives(t, b, id)
	got, err := d.GetRAIDConfiguration(ctx(t), n)
	must(t, "get RAID configuration", err)
	if len(got) != 0 {
		t.Fatalf("a fresh system has volumes: %v", got)
	}
	created, err := d.CreateRAIDConfiguration(ctx(t), n, []plugins.LogicalDisk{
		{"size_gb": float64(10), "raid_level": "1", "is_root_volume": true, "volume_name": "root"},
		{"size_gb": "MAX", "raid_level": "0"},
	})
	must(t, "create RAID configuration", err)
	if len(created) != 2 || created[0]["volume_name"] != "root" || created[0]["size_gb"] != float64(10) ||
		created[0]["raid_level"] != "1" || created[0]["is_root_volume"] != true || created[0]["controller"] != "1" {
		t.Fatalf("created %v", created)
	}
	// The RAID1 took the two smallest drives; the RAID0 has the third.
	sorted := slices.Clone(caps)
	slices.Sort(sorted)
	if disks, _ := created[1]["physical_disks"].([]any); len(disks) != 1 || created[1]["size_gb"] != float64(sorted[2]>>30) {
		t.Errorf("MAX RAID0: %v, want one drive of %d GiB", created[1], sorted[2]>>30)
	}
	read, err := d.GetRAIDConfiguration(ctx(t), n)
	must(t, "get RAID configuration", err)
	if len(read) != 2 || read[0]["raid_level"] != "1" || read[1]["raid_level"] != "0" {
		t.Errorf("read back %v", read)
	}
	// No free drive is left for a mirror; a level the driver cannot make
	// is not supported.
	_, err = d.CreateRAIDConfiguration(ctx(t), n, []plugins.LogicalDisk{{"size_gb": float64(1), "raid_level": "1"}})
	if err == nil || !strings.Contains(err.Error(), "needs 2 free drives") {
		t.Errorf("mirror without free drives: %v", err)
	}
	_, err = d.CreateRAIDConfiguration(ctx(t), n, []plugins.LogicalDisk{{"size_gb": float64(1), "raid_level": "JBOD"}})
	if !errors.Is(err, plugins.ErrNotSupported) {
		t.Errorf("JBOD: %v, want ErrNotSupported", err)
	}
	noSecret(t, err)
	must(t, "delete RAID configuration", d.DeleteRAIDConfiguration(ctx(t), n))
	if read, err = d.GetRAIDConfiguration(ctx(t), n); err != nil || len(read) != 0 {
		t.Errorf("after delete: %v, %v", read, err)
	}
	// Named drives and too big a size.
	_, err = d.CreateRAIDConfiguration(ctx(t), n, []plugins.LogicalDisk{{"size_gb": float64(caps[0]>>30 + 1), "raid_level": "0",
		"controller": "1", "physical_disks": []any{"Disk0"}}})
	if err == nil || !strings.Contains(err.Error(), "GiB requested") {
		t.Errorf("too big: %v", err)
	}
	created, err = d.CreateRAIDConfiguration(ctx(t), n, []plugins.LogicalDisk{{"size_gb": "MAX", "raid_level": "0",
		"controller": "1", "physical_disks": []any{"Disk0"}}})
	must(t, "create on a named drive", err)
	if fmt.Sprint(created[0]["physical_disks"]) != "[Disk0]" {
		t.Errorf("named drive: %v", created)
	}
}

// TestRAIDReadsDMTFLocalStorage: the driver reads the volumes of DMTF's
// public-localstorage mockup (drives linked under Chassis, RAID1 and
// RAID0 volumes) as raid_config's logical disks.
func TestRAIDReadsDMTFLocalStorage(t *testing.T) {
	m := startMockup(t, filepath.Join(testenv.RequireRedfishMockups(t), "public-localstorage"))
	sys := m.systems()[0]
	n := plugins.Node{UUID: "uuid-localstorage", HardwareType: "redfish", DriverInfo: plugins.DriverInfo{
		"redfish_address": m.URL, "redfish_system_id": sys, "redfish_username": "admin", "redfish_password": password}}
	d := newDriver(t, testOptions())
	got, err := d.GetRAIDConfiguration(ctx(t), n)
	must(t, "get RAID configuration", err)
	want := []string{
		"controller=1 level=1 name=Virtual Disk 1 size=837 disks=[3F5A8C54207B7233 35D38F11ACEF7BD3]",
		"controller=1 level=0 name=Virtual Disk 2 size=100 disks=[3D58ECBC375FD9F2]", // the mockup shares one drive
		"controller=1 level=0 name=Virtual Disk 3 size=100 disks=[3D58ECBC375FD9F2]",
	}
	var have []string
	for _, ld := range got {
		have = append(have, fmt.Sprintf("controller=%v level=%v name=%v size=%v disks=%v", ld["controller"], ld["raid_level"], ld["volume_name"], ld["size_gb"], ld["physical_disks"]))
	}
	if strings.Join(have, "\n") != strings.Join(want, "\n") {
		t.Errorf("logical disks:\n%s\nwant:\n%s", strings.Join(have, "\n"), strings.Join(want, "\n"))
	}
}
