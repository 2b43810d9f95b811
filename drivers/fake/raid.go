package fake

import (
	"context"
	"fmt"
	"maps"

	"github.com/rivetmetal/rivet/plugins"
)

// fakeDiskGB is the size of each of the fake node's physical disks, and
// fakeDisks how many it has: a size_gb of MAX takes what is left of them.
const (
	fakeDiskGB = 1000
	fakeDisks  = 4
)

var _ plugins.RAIDInterface = (*Driver)(nil)

// CreateRAIDConfiguration implements plugins.RAIDInterface in memory: the
// volumes are added after those the node has, a size_gb of MAX becomes the
// space left, and a volume that does not fit fails the whole call.
func (d *Driver) CreateRAIDConfiguration(_ context.Context, node plugins.Node, disks []plugins.LogicalDisk) ([]plugins.LogicalDisk, error) {
	var out []plugins.LogicalDisk
	err := d.with(node, "create RAID configuration", func(s *nodeState) error {
		used := 0.0
		for _, v := range s.volumes {
			size, _ := v["size_gb"].(float64)
			used += size
		}
		free := float64(fakeDiskGB*fakeDisks) - used
		var added []plugins.LogicalDisk
		for i, want := range disks {
			v := plugins.LogicalDisk(maps.Clone(want))
			size := free
			if want["size_gb"] != "MAX" {
				n, ok := want.Number("size_gb")
				if !ok {
					return fmt.Errorf("logical disk %d: size_gb %v: %w", i, want["size_gb"], plugins.ErrNotSupported)
				}
				size = n
			}
			if size > free || size <= 0 {
				return fmt.Errorf("logical disk %d: %v GiB requested, %v GiB free", i, want["size_gb"], free)
			}
			free -= size
			v["size_gb"] = size
			if _, ok := v["controller"]; !ok {
				v["controller"] = "fake-controller"
			}
			if _, ok := v["volume_name"]; !ok {
				v["volume_name"] = fmt.Sprintf("fake-volume-%d", len(s.volumes)+len(added))
			}
			added = append(added, v)
		}
		s.volumes = append(s.volumes, added...)
		out = cloneDisks(added)
		return nil
	})
	return out, err
}

// DeleteRAIDConfiguration implements plugins.RAIDInterface.
func (d *Driver) DeleteRAIDConfiguration(_ context.Context, node plugins.Node) error {
	return d.with(node, "delete RAID configuration", func(s *nodeState) error {
		s.volumes = nil
		return nil
	})
}

// GetRAIDConfiguration implements plugins.RAIDInterface.
func (d *Driver) GetRAIDConfiguration(_ context.Context, node plugins.Node) ([]plugins.LogicalDisk, error) {
	var out []plugins.LogicalDisk
	err := d.with(node, "get RAID configuration", func(s *nodeState) error {
		out = cloneDisks(s.volumes)
		return nil
	})
	return out, err
}

func cloneDisks(in []plugins.LogicalDisk) []plugins.LogicalDisk {
	out := make([]plugins.LogicalDisk, len(in))
	for i, v := range in {
		out[i] = maps.Clone(v)
	}
	return out
}
