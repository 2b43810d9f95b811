package db

import (
	"context"
	"slices"
	"time"

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
	// The attribute registry's facts (API 1.74).
	AttributeType   *string     `bun:"attribute_type"`
	AllowableValues JSONStrings `bun:"allowable_values"`
	LowerBound      *int64      `bun:"lower_bound"`
	MaxLength       *int64      `bun:"max_length"`
	MinLength       *int64      `bun:"min_length"`
	ReadOnly        *bool       `bun:"read_only"`
	ResetRequired   *bool       `bun:"reset_required"`
	Unique          *bool       `bun:"unique"`
	UpperBound      *int64      `bun:"upper_bound"`
	Timestamps
	// Version is the BIOSSetting object version the row was written at.
	Version *string `bun:"version"`
}

// ReplaceBIOSSettings replaces every BIOS setting of the node by settings
// (name → value, without registry fields), in one transaction; an empty map
// leaves none. The conductor's cache uses SyncBIOSSettings, which keeps
// created_at and the registry fields; this is for tests and tools. The
// caller holds the node's lease.
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

// SyncBIOSSettings records what the node's bios interface read (Ironic's
// cache_bios_settings and sync_node_setting): new settings are created,
// changed ones updated (updated_at set, created_at kept), unchanged ones
// left alone and ones no longer read deleted, in one transaction. The
// caller holds the node's lease.
func (s *Store) SyncBIOSSettings(ctx context.Context, nodeID int64, settings []*objects.BIOSSetting) error {
	existing, err := s.LoadAll(ctx, "BIOSSetting", func(q *bun.SelectQuery) *bun.SelectQuery {
		return q.Where("?TableAlias.node_id = ?", nodeID)
	})
	if err != nil {
		return err
	}
	old := map[string]*objects.BIOSSetting{}
	for _, o := range existing {
		bs := o.(*objects.BIOSSetting)
		old[bs.Name] = bs
	}
	var inserts, updates []*BIOSSetting
	seen := map[string]bool{}
	now := time.Now().UTC()
	for _, in := range settings {
		seen[in.Name] = true
		bs := in
		if prev, ok := old[in.Name]; ok {
			if sameBIOSSetting(prev, in) {
				continue
			}
			cp := *in
			cp.Base, cp.CreatedAt, cp.UpdatedAt = prev.Base, prev.CreatedAt, &now
			bs = &cp
		}
		bs.NodeID = nodeID
		if bs.AllowableValues == nil {
			bs.AllowableValues = []string{}
		}
		row, _, _, err := s.forDB(bs, false)
		if err != nil {
			return err
		}
		if _, ok := old[in.Name]; ok {
			updates = append(updates, row.(*BIOSSetting))
		} else {
			inserts = append(inserts, row.(*BIOSSetting))
		}
	}
	var gone []string
	for name := range old {
		if !seen[name] {
			gone = append(gone, name)
		}
	}
	return s.db.bun.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if len(gone) > 0 {
			if _, err := tx.NewDelete().Table(TableBIOSSettings).Where("node_id = ?", nodeID).Where("name IN (?)", bun.In(gone)).Exec(ctx); err != nil {
				return s.db.wrap(err, "sync BIOS settings")
			}
		}
		if len(inserts) > 0 {
			if _, err := tx.NewInsert().Model(&inserts).Returning("NULL").Exec(ctx); err != nil {
				return s.db.wrap(err, "sync BIOS settings")
			}
		}
		for _, row := range updates {
			if _, err := tx.NewUpdate().Model(row).ExcludeColumn("id", "node_id", "name", "created_at").
				Where("node_id = ?", nodeID).Where("name = ?", row.Name).Exec(ctx); err != nil {
				return s.db.wrap(err, "sync BIOS settings")
			}
		}
		return nil
	})
}

// sameBIOSSetting reports whether a cached setting already holds what was
// read.
func sameBIOSSetting(a, b *objects.BIOSSetting) bool {
	eq := func(x, y *string) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	eqi := func(x, y *int64) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	eqb := func(x, y *bool) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	return eq(a.Value, b.Value) && eq(a.AttributeType, b.AttributeType) && slices.Equal(a.AllowableValues, b.AllowableValues) &&
		eqi(a.LowerBound, b.LowerBound) && eqi(a.UpperBound, b.UpperBound) && eqi(a.MinLength, b.MinLength) &&
		eqi(a.MaxLength, b.MaxLength) && eqb(a.ReadOnly, b.ReadOnly) && eqb(a.ResetRequired, b.ResetRequired) && eqb(a.Unique, b.Unique)
}
