package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/uptrace/bun"
)

// TableNodeInventory holds NodeInventory rows.
const TableNodeInventory = "node_inventory"

// NodeInventory is a row of node_inventory: what the last in-band
// inspection of a node stored (Ironic's NodeInventory), the agent's
// inventory and the plugin data, as JSON text. One row per node: a new
// inspection replaces it, and it goes with its node. Not a versioned
// object: only the conductor writes it and only the REST API reads it.
type NodeInventory struct {
	bun.BaseModel `bun:"table:node_inventory,alias:ni"`

	ID            int64           `bun:"id,pk,autoincrement"`
	NodeID        int64           `bun:"node_id,notnull"`
	InventoryData json.RawMessage `bun:"inventory_data,type:text"`
	PluginData    json.RawMessage `bun:"plugin_data,type:text"`
	Timestamps
}

// ReplaceNodeInventory stores a node's inventory and plugin data (JSON
// documents), replacing what an earlier inspection stored, in one
// transaction as Ironic's create_node_inventory.
func (d *DB) ReplaceNodeInventory(ctx context.Context, nodeID int64, inventory, pluginData json.RawMessage) error {
	row := &NodeInventory{NodeID: nodeID, InventoryData: inventory, PluginData: pluginData}
	err := d.bun.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewDelete().Table(TableNodeInventory).Where("node_id = ?", nodeID).Exec(ctx); err != nil {
			return err
		}
		_, err := tx.NewInsert().Model(row).Exec(ctx)
		return err
	})
	return d.wrap(err, fmt.Sprintf("store the inventory of node %d", nodeID))
}

// NodeInventoryOf returns the inventory stored for a node, or an error
// wrapping ErrNotFound when none is.
func (d *DB) NodeInventoryOf(ctx context.Context, nodeID int64) (*NodeInventory, error) {
	row := new(NodeInventory)
	err := d.bun.NewSelect().Model(row).Where("ni.node_id = ?", nodeID).Limit(1).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("inventory of node %d: %w", nodeID, ErrNotFound)
	}
	if err != nil {
		return nil, d.wrap(err, fmt.Sprintf("read the inventory of node %d", nodeID))
	}
	return row, nil
}
