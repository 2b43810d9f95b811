package db

import (
	"context"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/uptrace/bun"
)

// BIOSSetting is a row of the bios_settings table (BIOSSetting objects,
// API 1.40), unique per (node_id, name). node_id has no foreign key (see
// the migration); DestroyNodeFenced deletes a node's rows with it.
type BIOSSetting struct {
	bun.BaseModel `bun:"table:bios_settings,alias:bs"`

	ID     int64   `bun:"id,pk,autoincrement"`
	NodeID int64   `bun:"node_id,notnull"`
	Name   string  `bun:"name,notnull"`
	Value  *string `bun:"value"`
	Timestamps
	// Version is the BIOSSetting object version the row was written at.
	Version *string `bun:"version"`
}

// ReplaceBIOSSettings replaces every BIOS setting of the node by settings
// (name → value), in one transaction; an empty map leaves none. It is what
// a bios interface's cache step (Ironic's cache_bios_settings, run after
// apply_configuration and factory_reset) calls with what it read from the
// BMC; until a hardware type has a bios interface other than no-bios only
// tests call it. The caller holds the node's lease.
func (s *Store) ReplaceBIOSSettings(ctx context.Context, nodeID int64, settings map[string]*string) error {
	rows := make([]*BIOSSetting, 0, len(settings))
	for name, value := range settings {
		obj, err := s.reg.New("BIOSSetting")
		if err != nil {
			return err
		}
		bs := obj.(*objects.BIOSSetting)
		bs.NodeID, bs.Name, bs.Value = nodeID, name, value
		row, _, _, err := s.forDB(bs, false)
		if err != nil {
			return err
		}
		rows = append(rows, row.(*BIOSSetting))
	}
	return s.db.bun.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewDelete().Table(TableBIOSSettings).Where("node_id = ?", nodeID).Exec(ctx); err != nil {
			return s.db.wrap(err, "replace BIOS settings")
		}
		if len(rows) == 0 {
			return nil
		}
		if _, err := tx.NewInsert().Model(&rows).Returning("NULL").Exec(ctx); err != nil {
			return s.db.wrap(err, "replace BIOS settings")
		}
		return nil
	})
}
