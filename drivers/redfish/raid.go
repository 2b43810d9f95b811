package redfish

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path"
	"slices"
	"strings"

	"github.com/stmcginnis/gofish/schemas"

	"github.com/rivetmetal/rivet/plugins"
)

// The raid interface (plugins.RAIDInterface), as Ironic's redfish RAID:
// the System's Storage resources, their Drives and their Volumes
// collection. A volume is created by POST to a Volumes collection
// ({"Name", "RAIDType", "CapacityBytes", "Links": {"Drives"}}) and deleted
// by DELETE. The driver expects the BMC to apply the change at once (a
// 201 with the volume, or its Location): a BMC that answers 202 with a
// task, to apply at the next reset, is refused with a message saying so,
// since Rivet does not reboot to finish a RAID step yet.
//
// Each logical disk is mapped to a RAID type ("0"→RAID0, "1"→RAID1,
// "5"→RAID5, "6"→RAID6, "1+0"→RAID10, "5+0"→RAID50, "6+0"→RAID60; JBOD and
// "2" are refused), a controller (the Storage whose Id, or Name, equals
// "controller", else the first Storage with a Volumes collection) and
// drives: those named in physical_disks (a Drive's Id, Name or
// @odata.id), else the smallest free drives matching disk_type
// (MediaType) and interface_type (Protocol), as many as
// number_of_physical_disks or the RAID type's minimum. size_gb MAX takes
// what the drives give at that RAID level.

// raidLevel is one RAID level the driver can create.
type raidLevel struct {
	raidType string
	min      int
	// overhead is how many drives' worth of capacity go to redundancy.
	overhead func(n int) int
}

var raidLevelsByName = map[string]raidLevel{
	"0":   {"RAID0", 1, func(int) int { return 0 }},
	"1":   {"RAID1", 2, func(n int) int { return n / 2 }},
	"5":   {"RAID5", 3, func(int) int { return 1 }},
	"6":   {"RAID6", 4, func(int) int { return 2 }},
	"1+0": {"RAID10", 4, func(n int) int { return n / 2 }},
	"5+0": {"RAID50", 6, func(int) int { return 2 }},
	"6+0": {"RAID60", 8, func(int) int { return 4 }},
}

// levelOf maps a Redfish RAIDType back to Ironic's raid_level.
func levelOf(raidType string) string {
	for name, l := range raidLevelsByName {
		if l.raidType == raidType {
			return name
		}
	}
	return raidType
}

// rfDrive is what the driver reads of a Drive.
type rfDrive struct {
	ID            string `json:"@odata.id"`
	Id            string //nolint:revive // Redfish's property name
	Name          string
	CapacityBytes json.Number
	MediaType     string
	Protocol      string
}

func (d rfDrive) capacity() int64 { n, _ := d.CapacityBytes.Int64(); return n }

// rfVolume is what the driver reads of a Volume.
type rfVolume struct {
	ID            string `json:"@odata.id"`
	Id            string //nolint:revive
	Name          string
	RAIDType      string
	VolumeType    string
	CapacityBytes json.Number
	Links         struct {
		Drives []struct {
			ID string `json:"@odata.id"`
		}
	}
}

// rfStorage is one Storage resource with its drives and volumes.
type rfStorage struct {
	ID     string `json:"@odata.id"`
	Id     string //nolint:revive
	Name   string
	Drives []struct {
		ID string `json:"@odata.id"`
	}
	Volumes struct {
		ID string `json:"@odata.id"`
	}
	drives  []rfDrive
	volumes []rfVolume
}

// getJSON reads one resource into v.
func (t target) getJSON(p string, v any) error {
	resp, err := t.c.Get(p)
	if err != nil {
		return err
	}
	defer schemas.DeferredCleanupHTTPResponse(resp)
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		return fmt.Errorf("decode %s: %w", p, err)
	}
	return nil
}

// storages reads the System's Storage resources, each with its drives and
// volumes. A System without Storage has no RAID: ErrNotSupported.
func (t target) storages() ([]*rfStorage, error) {
	var sys struct {
		Storage struct {
			ID string `json:"@odata.id"`
		}
	}
	if err := t.getJSON(t.path, &sys); err != nil {
		return nil, err
	}
	if sys.Storage.ID == "" {
		return nil, fmt.Errorf("the system %s has no Storage resource: %w", t.path, plugins.ErrNotSupported)
	}
	var coll struct {
		Members []struct {
			ID string `json:"@odata.id"`
		}
	}
	if err := t.getJSON(sys.Storage.ID, &coll); err != nil {
		return nil, err
	}
	var out []*rfStorage
	for _, m := range coll.Members {
		st := &rfStorage{}
		if err := t.getJSON(m.ID, st); err != nil {
			return nil, err
		}
		for _, d := range st.Drives {
			var drive rfDrive
			if err := t.getJSON(d.ID, &drive); err != nil {
				return nil, err
			}
			st.drives = append(st.drives, drive)
		}
		if st.Volumes.ID != "" {
			var vols struct {
				Members []struct {
					ID string `json:"@odata.id"`
				}
			}
			if err := t.getJSON(st.Volumes.ID, &vols); err != nil {
				return nil, err
			}
			for _, v := range vols.Members {
				var vol rfVolume
				if err := t.getJSON(v.ID, &vol); err != nil {
					return nil, err
				}
				st.volumes = append(st.volumes, vol)
			}
		}
		out = append(out, st)
	}
	return out, nil
}

// controllerName is how a logical disk names a Storage.
func (st *rfStorage) controllerName() string { return cmp.Or(st.Id, path.Base(st.ID)) }

// logicalDisk renders a volume as raid_config's item.
func (st *rfStorage) logicalDisk(v rfVolume) plugins.LogicalDisk {
	var disks []any
	for _, d := range v.Links.Drives {
		name := path.Base(d.ID)
		if i := slices.IndexFunc(st.drives, func(x rfDrive) bool { return x.ID == d.ID }); i >= 0 {
			name = cmp.Or(st.drives[i].Id, name)
		}
		disks = append(disks, name)
	}
	size, _ := v.CapacityBytes.Int64()
	return plugins.LogicalDisk{
		"size_gb":        float64(size / gib),
		"raid_level":     levelOf(v.RAIDType),
		"controller":     st.controllerName(),
		"volume_name":    v.Name,
		"physical_disks": disks,
	}
}

// GetRAIDConfiguration implements plugins.RAIDInterface: every volume of
// every Storage, as raid_config's logical disks.
func (d *Driver) GetRAIDConfiguration(ctx context.Context, node plugins.Node) ([]plugins.LogicalDisk, error) {
	var out []plugins.LogicalDisk
	err := d.call(ctx, node, "get RAID configuration", func(t target) error {
		sts, err := t.storages()
		if err != nil {
			return err
		}
		for _, st := range sts {
			for _, v := range st.volumes {
				out = append(out, st.logicalDisk(v))
			}
		}
		return nil
	})
	return out, err
}

// DeleteRAIDConfiguration implements plugins.RAIDInterface: DELETE of every
// volume of every Storage.
func (d *Driver) DeleteRAIDConfiguration(ctx context.Context, node plugins.Node) error {
	return d.call(ctx, node, "delete RAID configuration", func(t target) error {
		sts, err := t.storages()
		if err != nil {
			return err
		}
		for _, st := range sts {
			for _, v := range st.volumes {
				resp, err := t.c.Delete(v.ID)
				if err != nil {
					return fmt.Errorf("delete volume %s: %w", v.ID, err)
				}
				schemas.DeferredCleanupHTTPResponse(resp)
				if resp.StatusCode == 202 {
					return fmt.Errorf("the BMC applies the deletion of volume %s later (202 Accepted): %w", v.ID, errDeferredRAID)
				}
			}
		}
		return nil
	})
}

// errDeferredRAID says a BMC wants a reset to apply a RAID change.
var errDeferredRAID = fmt.Errorf("RAID changes applied at the next reset are not supported yet: %w", plugins.ErrNotSupported)

// CreateRAIDConfiguration implements plugins.RAIDInterface: one POST per
// logical disk, in the given order, each on drives no earlier volume
// uses.
func (d *Driver) CreateRAIDConfiguration(ctx context.Context, node plugins.Node, disks []plugins.LogicalDisk) ([]plugins.LogicalDisk, error) {
	var out []plugins.LogicalDisk
	err := d.call(ctx, node, "create RAID configuration", func(t target) error {
		sts, err := t.storages()
		if err != nil {
			return err
		}
		used := map[string]bool{}
		for _, st := range sts {
			for _, v := range st.volumes {
				for _, dr := range v.Links.Drives {
					used[dr.ID] = true
				}
			}
		}
		for i, ld := range disks {
			st, drives, level, size, err := planVolume(sts, used, ld)
			if err != nil {
				return fmt.Errorf("logical disk %d: %w", i, err)
			}
			links := make([]map[string]string, len(drives))
			for j, dr := range drives {
				links[j] = map[string]string{"@odata.id": dr.ID}
				used[dr.ID] = true
			}
			payload := map[string]any{"RAIDType": level.raidType, "CapacityBytes": size, "Links": map[string]any{"Drives": links}}
			if name, _ := ld["volume_name"].(string); name != "" {
				payload["Name"] = name
			}
			resp, err := t.c.Post(st.Volumes.ID, payload)
			if err != nil {
				return fmt.Errorf("logical disk %d: create volume: %w", i, err)
			}
			var vol rfVolume
			_ = json.NewDecoder(resp.Body).Decode(&vol)
			schemas.DeferredCleanupHTTPResponse(resp)
			if resp.StatusCode == 202 {
				return fmt.Errorf("logical disk %d: the BMC applies the new volume later (202 Accepted): %w", i, errDeferredRAID)
			}
			if loc := resp.Header.Get("Location"); vol.ID == "" && loc != "" {
				if err := t.getJSON(loc, &vol); err != nil {
					return err
				}
			}
			created := st.logicalDisk(vol)
			if vol.ID == "" { // the BMC said nothing of the volume: report what was asked
				created = st.logicalDisk(rfVolume{Name: fmt.Sprint(payload["Name"]), RAIDType: level.raidType, CapacityBytes: json.Number(fmt.Sprint(size))})
				for _, dr := range drives {
					created["physical_disks"] = append(created["physical_disks"].([]any), cmp.Or(dr.Id, path.Base(dr.ID)))
				}
			}
			created["is_root_volume"], _ = ld["is_root_volume"].(bool)
			out = append(out, created)
		}
		return nil
	})
	return out, err
}

// planVolume picks the controller, drives, RAID level and size in bytes of
// one logical disk.
func planVolume(sts []*rfStorage, used map[string]bool, ld plugins.LogicalDisk) (*rfStorage, []rfDrive, raidLevel, int64, error) {
	levelName, _ := ld["raid_level"].(string)
	level, ok := raidLevelsByName[levelName]
	if !ok {
		return nil, nil, raidLevel{}, 0, fmt.Errorf("RAID level %q is not supported by the redfish driver (it creates 0, 1, 5, 6, 1+0, 5+0, 6+0): %w", levelName, plugins.ErrNotSupported)
	}
	var st *rfStorage
	want, _ := ld["controller"].(string)
	for _, s := range sts {
		if s.Volumes.ID == "" {
			continue
		}
		if want == "" || want == s.controllerName() || want == s.Name || want == s.ID {
			st = s
			break
		}
	}
	if st == nil {
		if want != "" {
			return nil, nil, level, 0, fmt.Errorf("no Storage controller %q with a Volumes collection", want)
		}
		return nil, nil, level, 0, fmt.Errorf("no Storage resource has a Volumes collection: %w", plugins.ErrNotSupported)
	}
	var drives []rfDrive
	if names, ok := ld["physical_disks"].([]any); ok && len(names) > 0 {
		for _, n := range names {
			name, _ := n.(string)
			i := slices.IndexFunc(st.drives, func(d rfDrive) bool { return name != "" && (d.Id == name || d.Name == name || d.ID == name) })
			if i < 0 {
				return nil, nil, level, 0, fmt.Errorf("physical disk %v is not a drive of controller %s", n, st.controllerName())
			}
			if used[st.drives[i].ID] {
				return nil, nil, level, 0, fmt.Errorf("physical disk %v is in use by another volume", n)
			}
			drives = append(drives, st.drives[i])
		}
	} else {
		count := level.min
		if n, ok := ld.Number("number_of_physical_disks"); ok && int(n) > 0 {
			count = int(n)
		}
		var free []rfDrive
		for _, d := range st.drives {
			if used[d.ID] || !matches(d, ld) {
				continue
			}
			free = append(free, d)
		}
		slices.SortStableFunc(free, func(a, b rfDrive) int { return int(min(max(a.capacity()-b.capacity(), -1), 1)) })
		if len(free) < count {
			return nil, nil, level, 0, fmt.Errorf("RAID %s needs %d free drives on controller %s, %d match", levelName, count, st.controllerName(), len(free))
		}
		drives = free[:count]
	}
	if len(drives) < level.min {
		return nil, nil, level, 0, fmt.Errorf("RAID %s needs at least %d drives, %d given", levelName, level.min, len(drives))
	}
	smallest := int64(math.MaxInt64)
	for _, d := range drives {
		smallest = min(smallest, d.capacity())
	}
	usable := smallest * int64(len(drives)-level.overhead(len(drives)))
	size := usable
	if ld["size_gb"] != "MAX" {
		gb, ok := ld.Number("size_gb")
		if !ok {
			return nil, nil, level, 0, fmt.Errorf("size_gb %v is neither a number nor MAX", ld["size_gb"])
		}
		size = int64(gb) * gib
		if size > usable {
			return nil, nil, level, 0, fmt.Errorf("%v GiB requested, RAID %s over the chosen drives gives %d GiB", ld["size_gb"], levelName, usable/gib)
		}
	}
	return st, drives, level, size, nil
}

// matches reports whether drive d fits the logical disk's disk_type and
// interface_type.
func matches(d rfDrive, ld plugins.LogicalDisk) bool {
	if t, _ := ld["disk_type"].(string); t != "" && !strings.EqualFold(t, d.MediaType) {
		return false
	}
	if t, _ := ld["interface_type"].(string); t != "" && !strings.EqualFold(t, d.Protocol) {
		return false
	}
	return true
}

var _ plugins.RAIDInterface = (*Driver)(nil)
