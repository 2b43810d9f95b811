package db

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/uptrace/bun"
)

// NodeScalars is part of a node row: its id, uuid and object version and
// whichever of the scalar columns ListNodeScalars was asked for (the others
// stay zero). Strings are the columns' values as stored, so a NULL
// provision_state is not yet the Node object's default "enroll".
type NodeScalars struct {
	ID      int64
	UUID    string
	Version sql.NullString

	Driver         string
	Maintenance    bool
	ConsoleEnabled bool

	Name, InstanceUUID, LastError, MaintenanceReason, Reservation sql.NullString
	PowerState, TargetPowerState                                  sql.NullString
	ProvisionState, TargetProvisionState                          sql.NullString
	NetworkInterface, ResourceClass                               sql.NullString
}

// NodeScalarColumns are the columns ListNodeScalars can read besides id,
// uuid and version: text and boolean columns whose value the Node object
// holds unconverted (a NULL provision_state aside, which the object reads
// as its default).
var NodeScalarColumns = []string{
	"driver", "maintenance", "console_enabled", "name", "instance_uuid", "last_error", "maintenance_reason",
	"reservation", "power_state", "target_power_state", "provision_state", "target_provision_state",
	"network_interface", "resource_class",
}

// dest returns where column col of n is scanned to.
func (n *NodeScalars) dest(col string) (any, error) {
	switch col {
	case "driver":
		return &n.Driver, nil
	case "maintenance":
		return &n.Maintenance, nil
	case "console_enabled":
		return &n.ConsoleEnabled, nil
	case "name":
		return &n.Name, nil
	case "instance_uuid":
		return &n.InstanceUUID, nil
	case "last_error":
		return &n.LastError, nil
	case "maintenance_reason":
		return &n.MaintenanceReason, nil
	case "reservation":
		return &n.Reservation, nil
	case "power_state":
		return &n.PowerState, nil
	case "target_power_state":
		return &n.TargetPowerState, nil
	case "provision_state":
		return &n.ProvisionState, nil
	case "target_provision_state":
		return &n.TargetProvisionState, nil
	case "network_interface":
		return &n.NetworkInterface, nil
	case "resource_class":
		return &n.ResourceClass, nil
	}
	return nil, fmt.Errorf("db: %q is not a node scalar column", col)
}

// ListNodeScalars reads id, uuid, version and columns (from
// NodeScalarColumns) of the nodes the query q selects, in its order, with
// no object built and no JSON column decoded: the REST API's node list
// when it shows only such columns. q sees a select over the nodes table
// (alias n) like LoadAll's.
func (s *Store) ListNodeScalars(ctx context.Context, columns []string,
	q func(*bun.SelectQuery) *bun.SelectQuery) ([]NodeScalars, error) {
	var probe NodeScalars
	for _, c := range columns {
		if _, err := probe.dest(c); err != nil {
			return nil, err
		}
	}
	cols := append([]string{"id", "uuid", "version"}, columns...)
	rows, err := q(s.db.bun.NewSelect().Model((*Node)(nil)).Column(cols...)).Rows(ctx)
	if err != nil {
		return nil, s.db.wrap(err, "list Node")
	}
	defer rows.Close()
	var out []NodeScalars
	dests := make([]any, len(cols))
	for rows.Next() {
		out = append(out, NodeScalars{})
		n := &out[len(out)-1]
		dests[0], dests[1], dests[2] = &n.ID, &n.UUID, &n.Version
		for i, c := range columns {
			dests[3+i], _ = n.dest(c)
		}
		if err := rows.Scan(dests...); err != nil {
			return nil, s.db.wrap(err, "list Node")
		}
	}
	if err := rows.Err(); err != nil {
		return nil, s.db.wrap(err, "list Node")
	}
	return out, nil
}
