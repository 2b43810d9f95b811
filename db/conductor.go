package db

import "github.com/uptrace/bun"

// Conductor is a row of the conductors table: a registered conductor and
// the drivers it loaded (Ironic §5.1). Its updated_at is the heartbeat.
type Conductor struct {
	bun.BaseModel `bun:"table:conductors,alias:c"`

	ID             int64       `bun:"id,pk,autoincrement"`
	Hostname       string      `bun:"hostname,notnull"`
	ConductorGroup string      `bun:"conductor_group,notnull"`
	Online         bool        `bun:"online,notnull"`
	Drivers        JSONStrings `bun:"drivers"`
	Timestamps
	// Version is the Conductor object version the row was written at.
	Version *string `bun:"version"`
}

// ConductorHardwareInterface is a row of conductor_hardware_interfaces: one
// interface implementation a conductor offers for a hardware type. The hash
// ring is built from these rows joined with live conductors.
type ConductorHardwareInterface struct {
	bun.BaseModel `bun:"table:conductor_hardware_interfaces,alias:chi"`

	ID            int64  `bun:"id,pk,autoincrement"`
	ConductorID   int64  `bun:"conductor_id,notnull"`
	HardwareType  string `bun:"hardware_type,notnull"`
	InterfaceType string `bun:"interface_type,notnull"`
	InterfaceName string `bun:"interface_name,notnull"`
	IsDefault     bool   `bun:"is_default,notnull"`
	Timestamps
}
