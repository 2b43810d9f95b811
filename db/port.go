package db

import "github.com/uptrace/bun"

// Port is a row of the ports table: a NIC of a node, by MAC address.
type Port struct {
	bun.BaseModel `bun:"table:ports,alias:p"`

	ID                  int64      `bun:"id,pk,autoincrement"`
	UUID                string     `bun:"uuid,notnull"`
	Address             string     `bun:"address,notnull"`
	NodeID              int64      `bun:"node_id,notnull"`
	PortgroupID         *int64     `bun:"portgroup_id"`
	Extra               JSONObject `bun:"extra"`
	LocalLinkConnection JSONObject `bun:"local_link_connection"`
	PXEEnabled          bool       `bun:"pxe_enabled,notnull"`
	InternalInfo        JSONObject `bun:"internal_info"`
	Timestamps
	// Version is the Port object version the row was written at.
	Version *string `bun:"version"`
	// Port 1.1 (release 0.3).
	PhysicalNetwork *string `bun:"physical_network"`
	IsSmartNIC      *bool   `bun:"is_smartnic"`
	Name            *string `bun:"name"`
	Description     *string `bun:"description"`
	Vendor          *string `bun:"vendor"`
	Category        *string `bun:"category"`
}

// Portgroup is a row of the portgroups table: a bond of a node's ports.
type Portgroup struct {
	bun.BaseModel `bun:"table:portgroups,alias:pg"`

	ID                       int64      `bun:"id,pk,autoincrement"`
	UUID                     string     `bun:"uuid,notnull"`
	Name                     *string    `bun:"name"`
	Address                  *string    `bun:"address"`
	NodeID                   int64      `bun:"node_id,notnull"`
	Extra                    JSONObject `bun:"extra"`
	InternalInfo             JSONObject `bun:"internal_info"`
	StandalonePortsSupported bool       `bun:"standalone_ports_supported,notnull"`
	Mode                     *string    `bun:"mode"`
	Properties               JSONObject `bun:"properties"`
	Timestamps
	// Version is the Portgroup object version the row was written at.
	Version *string `bun:"version"`
	// Portgroup 1.1 (release 0.3).
	PhysicalNetwork *string `bun:"physical_network"`
	Category        *string `bun:"category"`
}

// Chassis is a row of the chassis table: an optional grouping of nodes.
type Chassis struct {
	bun.BaseModel `bun:"table:chassis,alias:ch"`

	ID          int64      `bun:"id,pk,autoincrement"`
	UUID        string     `bun:"uuid,notnull"`
	Description *string    `bun:"description"`
	Extra       JSONObject `bun:"extra"`
	Timestamps
	// Version is the Chassis object version the row was written at.
	Version *string `bun:"version"`
}
