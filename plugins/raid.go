package plugins

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/rivetmetal/rivet/plugins/internal/proto/driverv1"
	"github.com/rivetmetal/rivet/plugins/internal/proto/driverv2"
	"github.com/rivetmetal/rivet/plugins/internal/wire"
	"google.golang.org/protobuf/types/known/structpb"
)

// InterfaceRAID is the "raid" hardware interface (version 1, carried by
// protocol 2's rivet.driver.v2.RAID service).
const InterfaceRAID Interface = "raid"

// LogicalDisk is one logical disk as Ironic's RAID documents have it: an
// item of target_raid_config's "logical_disks" (keys size_gb, a number or
// "MAX"; raid_level; is_root_volume; volume_name; controller;
// physical_disks; share_physical_disks; disk_type; interface_type;
// number_of_physical_disks) or of raid_config's. The host validates a
// target against Ironic's schema before a driver sees it.
type LogicalDisk map[string]any

// Number reads the logical disk's numeric key (size_gb,
// number_of_physical_disks) as decoded in memory or from the wire:
// float64, int, int64 or json.Number. ok is false when the key is absent
// or not a number (size_gb "MAX" included).
func (d LogicalDisk) Number(key string) (float64, bool) {
	switch n := d[key].(type) {
	case float64:
		return n, true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

// RAIDInterface is the "raid" hardware interface: a driver implementing
// it advertises interface raid version 1 (it needs protocol 2). The
// conductor owns the steps (raid.create_configuration,
// raid.delete_configuration and the deploy step raid.apply_configuration)
// and the node's target_raid_config and raid_config; the driver does the
// hardware part.
type RAIDInterface interface {
	// CreateRAIDConfiguration creates the logical disks, in order (the
	// root volume first when there is one), and returns them as created:
	// each with size_gb resolved to a number, raid_level, controller,
	// physical_disks and volume_name where the hardware says. It may leave
	// existing volumes alone; the conductor deletes them first when asked
	// to (delete_existing).
	CreateRAIDConfiguration(ctx context.Context, node Node, disks []LogicalDisk) ([]LogicalDisk, error)
	// DeleteRAIDConfiguration deletes every logical disk of the node.
	DeleteRAIDConfiguration(ctx context.Context, node Node) error
	// GetRAIDConfiguration reads the node's logical disks, in raid_config's
	// form.
	GetRAIDConfiguration(ctx context.Context, node Node) ([]LogicalDisk, error)
}

func init() {
	interfaceProtocols[InterfaceRAID] = map[int]int{1: 2} // the rivet.driver.v2.RAID service
}

// raidServer serves protocol 2's RAID service over a driver's
// RAIDInterface. Every error leaves through toStatus.
type raidServer struct {
	driverv2.UnimplementedRAIDServer
	srv *server
}

func (s *raidServer) CreateConfiguration(ctx context.Context, req *driverv2.CreateRAIDRequest) (*driverv2.RAIDConfiguration, error) {
	d, err := capability[RAIDInterface](s.srv, "create RAID configuration")
	if err != nil {
		return nil, toStatus(err)
	}
	out, err := d.CreateRAIDConfiguration(ctx, nodeFromProto(req.GetNode()), LogicalDisksFromProto(req.GetLogicalDisks()))
	if err != nil {
		return nil, toStatus(err)
	}
	return raidConfiguration(out)
}

func (s *raidServer) DeleteConfiguration(ctx context.Context, req *driverv1.NodeRequest) (*driverv1.Empty, error) {
	d, err := capability[RAIDInterface](s.srv, "delete RAID configuration")
	if err != nil {
		return nil, toStatus(err)
	}
	return empty(d.DeleteRAIDConfiguration(ctx, nodeFromProto(req.GetNode())))
}

func (s *raidServer) GetConfiguration(ctx context.Context, req *driverv1.NodeRequest) (*driverv2.RAIDConfiguration, error) {
	d, err := capability[RAIDInterface](s.srv, "get RAID configuration")
	if err != nil {
		return nil, toStatus(err)
	}
	out, err := d.GetRAIDConfiguration(ctx, nodeFromProto(req.GetNode()))
	if err != nil {
		return nil, toStatus(err)
	}
	return raidConfiguration(out)
}

func raidConfiguration(disks []LogicalDisk) (*driverv2.RAIDConfiguration, error) {
	p, err := LogicalDisksToProto(disks)
	if err != nil {
		return nil, toStatus(err)
	}
	return &driverv2.RAIDConfiguration{LogicalDisks: p}, nil
}

// LogicalDisksToProto converts logical disks for the wire. It is exported
// for plugins/host only; driver authors never need it.
func LogicalDisksToProto(disks []LogicalDisk) ([]*structpb.Struct, error) {
	out := make([]*structpb.Struct, 0, len(disks))
	for i, d := range disks {
		s, err := wire.MapToStruct(d)
		if err != nil {
			return nil, fmt.Errorf("logical disk %d: %w", i, err)
		}
		out = append(out, s)
	}
	return out, nil
}

// LogicalDisksFromProto converts logical disks from the wire (numbers
// arrive as float64, as from encoding/json).
func LogicalDisksFromProto(in []*structpb.Struct) []LogicalDisk {
	out := make([]LogicalDisk, 0, len(in))
	for _, s := range in {
		out = append(out, LogicalDisk(s.AsMap()))
	}
	return out
}
