package db

import (
	"context"
	"strings"

	"github.com/uptrace/bun"
)

// PowerSyncNode is a node as PowerSyncNodes lists it: only the columns a
// power-state sync cycle, the conductor's node metrics and its sensor
// collection read. Power sync runs over every node a conductor holds, so a
// page of these, not of Node (640 bytes, most of them columns power sync
// never reads), is what it keeps in memory.
type PowerSyncNode struct {
	ID             int64      `bun:"id"`
	UUID           string     `bun:"uuid"`
	Name           *string    `bun:"name"`
	Driver         string     `bun:"driver"`
	ProvisionState *string    `bun:"provision_state"`
	ConductorGroup string     `bun:"conductor_group"`
	DriverInfo     JSONObject `bun:"driver_info"`
	PowerState     *string    `bun:"power_state"`
	Maintenance    bool       `bun:"maintenance"`
	Reservation    *string    `bun:"reservation"`
	Fault          *string    `bun:"fault"`
}

// PowerSyncPage is how many nodes PowerSyncNodes reads per query: enough
// that the round trips stay a small part of a cycle's listing, few enough
// that a conductor holding 100,000 nodes never holds them all decoded.
const PowerSyncPage = 2000

// PowerSyncNodes calls fn with the nodes of conductor group
// (case-insensitive) whose driver is one of drivers, in id order, a page
// of at most PowerSyncPage at a time (keyset pagination on id, so each
// query is an index range however many nodes there are). driver_info's
// secret values stay sealed; the BMC address keys never are. fn must not
// keep the slice: the next page reuses it. An error from fn stops the
// listing and is returned.
func (d *DB) PowerSyncNodes(ctx context.Context, group string, drivers []string, fn func([]PowerSyncNode) error) error {
	if len(drivers) == 0 {
		return nil
	}
	var after int64
	rows := make([]PowerSyncNode, 0, PowerSyncPage)
	for {
		// bun scans into the elements past len without zeroing them; a
		// NULL column or a JSON object would keep the last page's values.
		clear(rows[:cap(rows)])
		rows = rows[:0]
		err := d.bun.NewSelect().Table(TableNodes).
			Column("id", "uuid", "name", "driver", "provision_state", "conductor_group", "driver_info", "power_state",
				"maintenance", "reservation", "fault").
			Where("id > ?", after).
			Where("LOWER(conductor_group) = ?", strings.ToLower(group)).
			Where("driver IN (?)", bun.In(drivers)).
			OrderExpr("id ASC").Limit(PowerSyncPage).
			Scan(ctx, &rows)
		if err != nil {
			return d.wrap(err, "list nodes for power-state sync")
		}
		if len(rows) == 0 {
			return nil
		}
		after = rows[len(rows)-1].ID
		if err := fn(rows); err != nil {
			return err
		}
		if len(rows) < PowerSyncPage {
			return nil
		}
	}
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
