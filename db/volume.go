package db

import "github.com/uptrace/bun"

// VolumeConnector is a row of the volume_connectors table: a node's
// endpoint for remote volumes (REST API 1.32).
type VolumeConnector struct {
	bun.BaseModel `bun:"table:volume_connectors,alias:vc"`

	ID          int64      `bun:"id,pk,autoincrement"`
	UUID        string     `bun:"uuid,notnull"`
	NodeID      int64      `bun:"node_id,notnull"`
	Type        string     `bun:"type,notnull"`
	ConnectorID string     `bun:"connector_id,notnull"`
	Extra       JSONObject `bun:"extra"`
	Timestamps
	// Version is the VolumeConnector object version the row was written at.
	Version *string `bun:"version"`
}

// VolumeTarget is a row of the volume_targets table: a remote volume of a
// node (REST API 1.32).
type VolumeTarget struct {
	bun.BaseModel `bun:"table:volume_targets,alias:vt"`

	ID         int64      `bun:"id,pk,autoincrement"`
	UUID       string     `bun:"uuid,notnull"`
	NodeID     int64      `bun:"node_id,notnull"`
	VolumeType string     `bun:"volume_type,notnull"`
	Properties JSONObject `bun:"properties"`
	BootIndex  int64      `bun:"boot_index,notnull"`
	VolumeID   string     `bun:"volume_id,notnull"`
	Extra      JSONObject `bun:"extra"`
	Timestamps
	// Version is the VolumeTarget object version the row was written at.
	Version *string `bun:"version"`
}
