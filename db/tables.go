package db

import (
	"context"
	"slices"
	"strings"
)

// Table names, one per row model.
const (
	TableNodes                       = "nodes"
	TablePorts                       = "ports"
	TablePortgroups                  = "portgroups"
	TableChassis                     = "chassis"
	TableConductors                  = "conductors"
	TableConductorHardwareInterfaces = "conductor_hardware_interfaces"
	TableServices                    = "services"
	TableVolumeConnectors            = "volume_connectors"
	TableVolumeTargets               = "volume_targets"
	TableNodeTraits                  = "node_traits"
	TableDeployTemplates             = "deploy_templates"
	TableRunbooks                    = "runbooks"
	TableAllocations                 = "allocations"
	TableNodeHistory                 = "node_history"
	TableBIOSSettings                = "bios_settings"
	TableInspectionRules             = "inspection_rules"

	TableFirmwareComponents = "firmware_information"
)

// objectTables maps each object kind of core/release to the table holding
// its rows. Every table listed has a version column.
var objectTables = map[string]string{
	"Chassis":   TableChassis,
	"Conductor": TableConductors,
	"Node":      TableNodes,
	"Port":      TablePorts,
	"Portgroup": TablePortgroups,
	// 0.3 (REST API 1.32)
	"VolumeConnector": TableVolumeConnectors,
	"VolumeTarget":    TableVolumeTargets,
	"DeployTemplate":  TableDeployTemplates,
	"Runbook":         TableRunbooks,
	"Trait":           TableNodeTraits,
	"Allocation":      TableAllocations,
	"NodeHistory":     TableNodeHistory,
	"BIOSSetting":     TableBIOSSettings,
	"InspectionRule":  TableInspectionRules,

	"FirmwareComponent": TableFirmwareComponents,
}

// ObjectTables returns a copy of the object kind → table map, for the
// version checks of dbsync and the online migration that bumps versions.
func ObjectTables() map[string]string {
	out := make(map[string]string, len(objectTables))
	for k, v := range objectTables {
		out[k] = v
	}
	return out
}

// ObjectKinds returns the object kinds that have a table, sorted.
func ObjectKinds() []string {
	kinds := make([]string, 0, len(objectTables))
	for k := range objectTables {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	return kinds
}

// Tables lists the tables present in the database, sorted and lowercased.
func (d *DB) Tables(ctx context.Context) ([]string, error) {
	var query string
	switch d.dialect {
	case Postgres:
		query = "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'"
	case MySQL:
		query = "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_type = 'BASE TABLE'"
	default:
		query = "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
	}
	rows, err := d.bun.QueryContext(ctx, query)
	if err != nil {
		return nil, d.wrap(err, "list tables")
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, d.wrap(err, "list tables")
		}
		names = append(names, strings.ToLower(n))
	}
	if err := rows.Err(); err != nil {
		return nil, d.wrap(err, "list tables")
	}
	slices.Sort(names)
	return names, nil
}

// HasTable reports whether the database has table name.
func (d *DB) HasTable(ctx context.Context, name string) (bool, error) {
	names, err := d.Tables(ctx)
	if err != nil {
		return false, err
	}
	_, found := slices.BinarySearch(names, strings.ToLower(name))
	return found, nil
}
