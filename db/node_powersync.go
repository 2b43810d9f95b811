package db

import (
	"context"
	"strings"

	"github.com/uptrace/bun"
)

// PowerSyncNodes lists the nodes of conductor group (case-insensitive)
// whose driver is one of drivers, in id order, with only the columns a
// power-state sync cycle reads: id, uuid, driver, conductor_group,
// driver_info (its secret values still sealed; the BMC address keys never
// are), power_state, maintenance and reservation. Listing whole nodes
// instead made every cycle decode every JSON column of every node: with
// 14,700 nodes, most of an idle conductor's CPU and a transient of about
// 100 MiB.
func (d *DB) PowerSyncNodes(ctx context.Context, group string, drivers []string) ([]Node, error) {
	if len(drivers) == 0 {
		return nil, nil
	}
	var out []Node
	err := d.bun.NewSelect().Model(&out).
		Column("id", "uuid", "name", "driver", "provision_state", "conductor_group", "driver_info", "power_state", "maintenance", "reservation", "fault").
		Where("LOWER(n.conductor_group) = ?", strings.ToLower(group)).
		Where("n.driver IN (?)", bun.In(drivers)).
		OrderExpr("n.id ASC").
		Scan(ctx)
	if err != nil {
		return nil, d.wrap(err, "list nodes for power-state sync")
	}
	return out, nil
}

// ConsoleEnabledNodes lists the nodes of conductor group (case-insensitive)
// whose driver is one of drivers and whose console is enabled, in id
// order, with the columns the console periodic reads (id, uuid, driver,
// conductor_group): the conductor restarts the consoles of those the hash
// ring maps to it (Ironic's _start_consoles).
func (d *DB) ConsoleEnabledNodes(ctx context.Context, group string, drivers []string) ([]Node, error) {
	if len(drivers) == 0 {
		return nil, nil
	}
	var out []Node
	err := d.bun.NewSelect().Model(&out).
		Column("id", "uuid", "driver", "conductor_group").
		Where("n.console_enabled = ?", true).
		Where("LOWER(n.conductor_group) = ?", strings.ToLower(group)).
		Where("n.driver IN (?)", bun.In(drivers)).
		OrderExpr("n.id ASC").
		Scan(ctx)
	if err != nil {
		return nil, d.wrap(err, "list nodes with their console enabled")
	}
	return out, nil
}
