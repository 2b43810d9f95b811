package db

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"
)

// DestroyNodeFenced deletes a node with its ports, portgroups, volume
// connectors and targets, traits, history, stored inventory and BIOS
// settings in one
// transaction, if holder still holds the node's lease at epoch; otherwise
// nothing is deleted and the error wraps ErrLeaseLost. Deleting the row
// ends the lease with it, so there is nothing to release afterwards
// (prior-art item 27: no NodeLocked after a delete that succeeded).
func (d *DB) DestroyNodeFenced(ctx context.Context, nodeID int64, holder string, epoch int64) error {
	action := fmt.Sprintf("destroy node %d under lease of %s (epoch %d)", nodeID, holder, epoch)
	lost := false
	err := d.bun.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		// Lock the node row first (the conditional UPDATE), so no other
		// holder can appear while its children go.
		res, err := tx.NewUpdate().Table(TableNodes).Set("reservation = reservation").
			Where("id = ?", nodeID).Where("reservation = ?", holder).Where("reservation_epoch = ?", epoch).
			Exec(ctx)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			lost = err == nil
			return err
		}
		// An allocation of the node (allowed in maintenance only) stays,
		// without its node, as Ironic's orphaned allocation does.
		if _, err := tx.NewUpdate().Table(TableAllocations).Set("node_id = NULL").Where("node_id = ?", nodeID).Exec(ctx); err != nil {
			return err
		}
		for _, table := range []string{TablePorts, TablePortgroups, TableVolumeConnectors, TableVolumeTargets, TableNodeTraits,
			TableNodeHistory, TableNodeInventory, TableBIOSSettings, TableFirmwareComponents} {
			if _, err := tx.NewDelete().Table(table).Where("node_id = ?", nodeID).Exec(ctx); err != nil {
				return err
			}
		}
		_, err = tx.NewDelete().Table(TableNodes).Where("id = ?", nodeID).Exec(ctx)
		return err
	})
	if err != nil {
		return d.wrap(err, action)
	}
	if lost {
		return fmt.Errorf("%s: %w", action, ErrLeaseLost)
	}
	return nil
}
