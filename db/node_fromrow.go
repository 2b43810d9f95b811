package db

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/uptrace/bun"
)

// nodeRowFields are the Node object fields nodeFromRow fills, in the
// registry's order. When the registry's Node has other fields (a field was
// added and nodeFromRow not taught it), fromRow takes the generic path.
var nodeRowFields = []string{
	"id", "uuid", "name", "chassis_id", "driver", "driver_info", "driver_internal_info", "extra",
	"instance_info", "properties", "clean_step", "raid_config", "target_raid_config", "instance_uuid",
	"last_error", "maintenance", "maintenance_reason", "power_state", "target_power_state", "provision_state",
	"target_provision_state", "provision_updated_at", "inspection_started_at", "inspection_finished_at",
	"network_interface", "resource_class", "console_enabled", "conductor_affinity", "conductor_group",
	"reservation", "created_at", "updated_at", "boot_interface", "console_interface", "deploy_interface",
	"inspect_interface", "management_interface", "power_interface", "raid_interface", "vendor_interface",
	"storage_interface", "rescue_interface", "bios_interface", "firmware_interface", "fault", "deploy_step",
	"automated_clean", "protected", "protected_reason", "description", "retired", "retired_reason", "shard",
	"parent_node", "disable_power_off", "instance_name", "health",
	"allocation_id",
	"owner", "lessee",
	"network_data",
	"service_step",
}

// typedNodeRows caches, per registry, whether its Node fields are exactly
// nodeRowFields.
var typedNodeRows sync.Map // *objects.Registry → bool

func (s *Store) typedNodeRows() bool {
	if ok, found := typedNodeRows.Load(s.reg); found {
		return ok.(bool)
	}
	fields, err := s.reg.FieldTable("Node")
	ok := err == nil && slices.EqualFunc(fields, nodeRowFields, func(f objects.Field, name string) bool { return f.Name == name })
	typedNodeRows.Store(s.reg, ok)
	return ok
}

// nodeFromRow is fromRow for a Node without reflection: each column is
// assigned to its field as the generic path (objectValue, Registry.Set)
// would, then the object is finished by FromDB as every object is. A
// GET of one node spent about a fifth of its API CPU in the generic
// path's per-field lookups. TestNodeFromRowMatchesGeneric holds the two
// equal. With readOnly the node is finished by FromDBReadOnly instead: no
// snapshot, and it cannot be saved.
func (s *Store) nodeFromRow(row *Node, readOnly bool) (objects.Object, error) {
	obj, err := s.reg.New("Node")
	if err != nil {
		return nil, err
	}
	n, ok := obj.(*objects.Node)
	if !ok {
		return nil, fmt.Errorf("db: Node object is %T", obj)
	}
	driverInfo, err := openCredentials(s.keys, map[string]any(row.DriverInfo))
	if err != nil {
		return nil, fmt.Errorf("db: node %s: %w", row.UUID, err)
	}
	n.ID = row.ID
	n.UUID = row.UUID
	n.Name = copyPtr(row.Name)
	n.ChassisID = copyPtr(row.ChassisID)
	n.Driver = row.Driver
	n.DriverInfo = orDefault(driverInfo, n.DriverInfo)
	n.DriverInternalInfo = orDefault(row.DriverInternalInfo, n.DriverInternalInfo)
	n.Extra = orDefault(row.Extra, n.Extra)
	n.InstanceInfo = orDefault(row.InstanceInfo, n.InstanceInfo)
	n.Properties = orDefault(row.Properties, n.Properties)
	n.CleanStep = orDefault(row.CleanStep, n.CleanStep)
	n.RAIDConfig = orDefault(row.RAIDConfig, n.RAIDConfig)
	n.TargetRAIDConfig = orDefault(row.TargetRAIDConfig, n.TargetRAIDConfig)
	n.InstanceUUID = copyPtr(row.InstanceUUID)
	n.LastError = copyPtr(row.LastError)
	n.Maintenance = row.Maintenance
	n.MaintenanceReason = copyPtr(row.MaintenanceReason)
	n.PowerState = copyPtr(row.PowerState)
	n.TargetPowerState = copyPtr(row.TargetPowerState)
	if row.ProvisionState != nil { // NULL keeps the default
		n.ProvisionState = *row.ProvisionState
	}
	n.TargetProvisionState = copyPtr(row.TargetProvisionState)
	n.ProvisionUpdatedAt = nullTime(row.ProvisionUpdatedAt)
	n.InspectionStartedAt = nullTime(row.InspectionStartedAt)
	n.InspectionFinishedAt = nullTime(row.InspectionFinishedAt)
	n.NetworkInterface = copyPtr(row.NetworkInterface)
	n.ResourceClass = copyPtr(row.ResourceClass)
	n.ConsoleEnabled = row.ConsoleEnabled
	n.ConductorAffinity = copyPtr(row.ConductorAffinity)
	n.ConductorGroup = row.ConductorGroup
	n.Reservation = copyPtr(row.Reservation)
	n.CreatedAt = row.CreatedAt.UTC()
	n.UpdatedAt = nullTime(row.UpdatedAt)
	n.BootInterface = copyPtr(row.BootInterface)
	n.ConsoleInterface = copyPtr(row.ConsoleInterface)
	n.DeployInterface = copyPtr(row.DeployInterface)
	n.InspectInterface = copyPtr(row.InspectInterface)
	n.ManagementInterface = copyPtr(row.ManagementInterface)
	n.PowerInterface = copyPtr(row.PowerInterface)
	n.RAIDInterface = copyPtr(row.RAIDInterface)
	n.VendorInterface = copyPtr(row.VendorInterface)
	n.StorageInterface = copyPtr(row.StorageInterface)
	n.RescueInterface = copyPtr(row.RescueInterface)
	n.BIOSInterface = copyPtr(row.BIOSInterface)
	n.FirmwareInterface = copyPtr(row.FirmwareInterface)
	n.Fault = copyPtr(row.Fault)
	n.DeployStep = orDefault(row.DeployStep, n.DeployStep)
	n.AutomatedClean = copyPtr(row.AutomatedClean)
	n.Protected = orFalse(row.Protected)
	n.ProtectedReason = copyPtr(row.ProtectedReason)
	n.Description = copyPtr(row.Description)
	n.Retired = orFalse(row.Retired)
	n.RetiredReason = copyPtr(row.RetiredReason)
	n.Shard = copyPtr(row.Shard)
	n.ParentNode = copyPtr(row.ParentNode)
	n.DisablePowerOff = orFalse(row.DisablePowerOff)
	n.InstanceName = copyPtr(row.InstanceName)
	n.Health = copyPtr(row.Health)
	n.AllocationID = copyPtr(row.AllocationID)
	n.Owner = copyPtr(row.Owner)
	n.Lessee = copyPtr(row.Lessee)
	n.NetworkData = orDefault(row.NetworkData, n.NetworkData)
	n.ServiceStep = orDefault(row.ServiceStep, n.ServiceStep)
	if row.Version == nil {
		return nil, fmt.Errorf("db: nodes row has no object version; run `rivet dbsync upgrade` to check the database")
	}
	stored, err := parseRowVersion("nodes", *row.Version)
	if err != nil {
		return nil, err
	}
	if err := s.finishFromDB(n, stored, readOnly); err != nil {
		return nil, fmt.Errorf("db: nodes row: %w", err)
	}
	return n, nil
}

// copyPtr returns a new pointer to what p points to, or nil.
func copyPtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// orFalse is a nullable boolean column's value, NULL read as false (the
// field's default, as the generic path keeps it).
func orFalse(b *bool) bool { return b != nil && *b }

// orDefault returns m, or def (the new object's default) when m is nil.
func orDefault[M ~map[string]any](m M, def map[string]any) map[string]any {
	if m == nil {
		return def
	}
	return map[string]any(m)
}

// nullTime is a nullable timestamp column's value in UTC, or nil.
func nullTime(t bun.NullTime) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.Time.UTC()
	return &u
}
