package sim

import (
	"net/http"
	"testing"
)

// systemWithDisks returns the index of a system of s with at least n
// drives.
func systemWithDisks(t *testing.T, s *Simulator, n int) int {
	t.Helper()
	for i := range s.systems {
		if len(s.hardware(i).disks) >= n {
			return i
		}
	}
	t.Fatalf("no system has %d drives", n)
	return -1
}

// Volumes are created by POST to the Volumes collection and deleted by
// DELETE, immediately; their drives are in use; a RAID type needs its
// drives and a capacity they can give.
func TestStorageVolumes(t *testing.T) {
	g := newRig(t, Options{Systems: 16})
	i := systemWithDisks(t, g.sim, 2)
	vols := storagePath(i) + "/Volumes"
	st := g.do("GET", storagePath(i), admin, nil)
	if st.status != http.StatusOK || st.body["Volumes"] == nil {
		t.Fatalf("storage: %d %v", st.status, st.body)
	}
	if got := g.do("GET", vols, admin, nil); got.body["Members@odata.count"] != float64(0) {
		t.Fatalf("volumes before: %v", got.body)
	}
	hw := g.sim.hardware(i)
	smallest := min(hw.disks[0].capacityBytes, hw.disks[1].capacityBytes)
	mirror := map[string]any{"RAIDType": "RAID1", "Name": "root", "CapacityBytes": smallest / 2,
		"Links": map[string]any{"Drives": []any{map[string]any{"@odata.id": drivePath(i, 0)}, map[string]any{"@odata.id": drivePath(i, 1)}}}}
	bad := map[string]struct {
		body   map[string]any
		status int
	}{
		"unknown RAID type": {map[string]any{"RAIDType": "RAID9", "Links": mirror["Links"]}, http.StatusBadRequest},
		"one drive mirror":  {map[string]any{"RAIDType": "RAID1", "Links": map[string]any{"Drives": []any{map[string]any{"@odata.id": drivePath(i, 0)}}}}, http.StatusBadRequest},
		"too big":           {map[string]any{"RAIDType": "RAID1", "CapacityBytes": smallest + 1, "Links": mirror["Links"]}, http.StatusBadRequest},
		"foreign drive":     {map[string]any{"RAIDType": "RAID0", "Links": map[string]any{"Drives": []any{map[string]any{"@odata.id": "/redfish/v1/x/Disk0"}}}}, http.StatusBadRequest},
		"unknown property":  {map[string]any{"RAIDType": "RAID0", "Speed": 1}, http.StatusBadRequest},
	}
	for name, tc := range bad {
		if got := g.do("POST", vols, admin, tc.body); got.status != tc.status {
			t.Errorf("%s: %d %s, want %d", name, got.status, got.raw, tc.status)
		}
	}
	created := g.do("POST", vols, admin, mirror)
	if created.status != http.StatusCreated || created.header.Get("Location") == "" || created.body["RAIDType"] != "RAID1" {
		t.Fatalf("create: %d %v", created.status, created.body)
	}
	loc := created.header.Get("Location")
	if got := g.do("GET", loc, admin, nil); got.body["CapacityBytes"] != float64(smallest/2) || got.body["Name"] != "root" {
		t.Errorf("volume: %v", got.body)
	}
	if got := g.do("GET", drivePath(i, 0), admin, nil); len(got.body["Links"].(map[string]any)["Volumes"].([]any)) != 1 {
		t.Errorf("drive 0 does not link its volume: %v", got.body)
	}
	// The drives are in use now.
	if got := g.do("POST", vols, admin, mirror); got.status != http.StatusConflict {
		t.Errorf("second volume on the same drives: %d", got.status)
	}
	if got := g.do("DELETE", loc, admin, nil); got.status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", got.status, got.raw)
	}
	if got := g.do("GET", loc, admin, nil); got.status != http.StatusNotFound {
		t.Errorf("deleted volume still answers %d", got.status)
	}
	if got := g.do("GET", vols, admin, nil); got.body["Members@odata.count"] != float64(0) {
		t.Errorf("volumes after delete: %v", got.body)
	}
	if got := g.do("POST", vols, admin, mirror); got.status != http.StatusCreated {
		t.Errorf("drives free again after the delete: %d %s", got.status, got.raw)
	}
}
