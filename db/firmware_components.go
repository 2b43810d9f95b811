package db

import (
	"context"
	"slices"
	"time"

	"github.com/uptrace/bun"

	"github.com/rivetmetal/rivet/core/objects"
)

// FirmwareComponent is a row of the firmware_information table
// (FirmwareComponent objects, API 1.86), unique per (node_id, component).
// node_id has no foreign key (see the migration); DestroyNodeFenced
// deletes a node's rows with it.
type FirmwareComponent struct {
	bun.BaseModel `bun:"table:firmware_information,alias:fw"`

	ID                 int64   `bun:"id,pk,autoincrement"`
	NodeID             int64   `bun:"node_id,notnull"`
	Component          string  `bun:"component,notnull"`
	InitialVersion     string  `bun:"initial_version,notnull"`
	CurrentVersion     *string `bun:"current_version"`
	LastVersionFlashed *string `bun:"last_version_flashed"`
	Timestamps
	// Version is the FirmwareComponent object version the row was written at.
	Version *string `bun:"version"`
}

// FirmwareReading is one component as a firmware interface read it.
type FirmwareReading struct {
	Component      string
	CurrentVersion string
}

// SyncFirmwareComponents records what the node's firmware interface read
// (Ironic's cache_firmware_components and sync_firmware_components): a
// component seen for the first time gets initial_version and
// current_version; a known one whose version changed gets the new
// current_version (and updated_at), and, when flashed names it (the update
// step just ran for it), last_version_flashed. Components no longer read
// are kept, as Ironic keeps them. One transaction; the caller holds the
// node's lease. Refused (an error) while the effective release has no
// FirmwareComponent.
func (s *Store) SyncFirmwareComponents(ctx context.Context, nodeID int64, read []FirmwareReading, flashed []string) error {
	existing, err := s.LoadAll(ctx, "FirmwareComponent", func(q *bun.SelectQuery) *bun.SelectQuery {
		return q.Where("?TableAlias.node_id = ?", nodeID)
	})
	if err != nil {
		return err
	}
	byName := map[string]*objects.FirmwareComponent{}
	for _, o := range existing {
		fc := o.(*objects.FirmwareComponent)
		byName[fc.Component] = fc
	}
	var inserts, updates []*FirmwareComponent
	now := time.Now().UTC()
	for _, r := range read {
		fc, known := byName[r.Component]
		version := r.CurrentVersion
		if !known {
			obj, err := s.reg.New("FirmwareComponent")
			if err != nil {
				return err
			}
			fc = obj.(*objects.FirmwareComponent)
			fc.NodeID, fc.Component, fc.InitialVersion, fc.CurrentVersion = nodeID, r.Component, version, &version
			if slices.Contains(flashed, r.Component) {
				fc.LastVersionFlashed = &version
			}
			row, _, _, err := s.forDB(fc, false)
			if err != nil {
				return err
			}
			inserts = append(inserts, row.(*FirmwareComponent))
			continue
		}
		changed := fc.CurrentVersion == nil || *fc.CurrentVersion != version
		fc.CurrentVersion = &version
		if slices.Contains(flashed, r.Component) {
			fc.LastVersionFlashed, changed = &version, true
		}
		if !changed {
			continue
		}
		fc.UpdatedAt = &now
		row, _, _, err := s.forDB(fc, false)
		if err != nil {
			return err
		}
		updates = append(updates, row.(*FirmwareComponent))
	}
	return s.db.bun.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if len(inserts) > 0 {
			if _, err := tx.NewInsert().Model(&inserts).Returning("NULL").Exec(ctx); err != nil {
				return s.db.wrap(err, "sync firmware components")
			}
		}
		for _, row := range updates {
			if _, err := tx.NewUpdate().Model(row).Column("current_version", "last_version_flashed", "updated_at", "version").
				WherePK().Exec(ctx); err != nil {
				return s.db.wrap(err, "sync firmware components")
			}
		}
		return nil
	})
}
