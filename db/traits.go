package db

import (
	"context"
	"fmt"
	"slices"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/uptrace/bun"
)

// TraitNotFoundError: a trait to remove is not one of the node's.
type TraitNotFoundError struct{ Trait string }

func (e *TraitNotFoundError) Error() string { return fmt.Sprintf("trait %q not found", e.Trait) }

// Is makes a TraitNotFoundError match ErrNotFound.
func (e *TraitNotFoundError) Is(target error) bool { return target == ErrNotFound }

// TooManyTraitsError: a change would leave a node more than
// objects.MaxTraitsPerNode traits; nothing was written.
type TooManyTraitsError struct{ Count int }

func (e *TooManyTraitsError) Error() string {
	return fmt.Sprintf("%d traits exceed the maximum of %d per node", e.Count, objects.MaxTraitsPerNode)
}

// NodeTraits returns the traits of the node with ID nodeID, sorted. It is
// one fixed statement (TraitsOfNodes writes its ids into the text), so
// SQLite prepares it once and PostgreSQL on second sight: GET
// /v1/nodes/{uuid} runs it on every request from API 1.37.
func (s *Store) NodeTraits(ctx context.Context, nodeID int64) ([]string, error) {
	text := "SELECT trait FROM " + TableNodeTraits + " WHERE node_id = ? ORDER BY trait"
	if s.db.dialect == Postgres {
		text = "SELECT trait FROM " + TableNodeTraits + " WHERE node_id = $1 ORDER BY trait"
	}
	rows, err := s.db.queryContext(ctx, text, nodeID)
	if err != nil {
		return nil, s.db.wrap(err, "list node traits")
	}
	defer rows.Close()
	traits := []string{}
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return nil, s.db.wrap(err, "list node traits")
		}
		traits = append(traits, t)
	}
	if err := rows.Err(); err != nil {
		return nil, s.db.wrap(err, "list node traits")
	}
	return traits, nil
}

// TraitsOfNodes returns the traits of each of the nodes ids, sorted, in
// one query: how a node list shows traits without a query per node. Nodes
// without traits have no entry.
func (s *Store) TraitsOfNodes(ctx context.Context, ids []int64) (map[int64][]string, error) {
	out := map[int64][]string{}
	if len(ids) == 0 {
		return out, nil
	}
	var rows []struct {
		NodeID int64  `bun:"node_id"`
		Trait  string `bun:"trait"`
	}
	err := s.db.bun.NewSelect().Table(TableNodeTraits).Column("node_id", "trait").
		Where("node_id IN (?)", bun.In(ids)).Order("node_id", "trait").Scan(ctx, &rows)
	if err != nil {
		return nil, s.db.wrap(err, "list node traits")
	}
	for _, r := range rows {
		out[r.NodeID] = append(out[r.NodeID], r.Trait)
	}
	return out, nil
}

// SetNodeTraits replaces the node's traits by traits (duplicates count
// once), in one transaction. The caller holds the node's lease.
func (s *Store) SetNodeTraits(ctx context.Context, nodeID int64, traits []string) error {
	want := uniqueSorted(traits)
	if len(want) > objects.MaxTraitsPerNode {
		return &TooManyTraitsError{Count: len(want)}
	}
	return s.db.bun.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewDelete().Table(TableNodeTraits).Where("node_id = ?", nodeID).Exec(ctx); err != nil {
			return s.db.wrap(err, "set node traits")
		}
		return s.insertTraits(ctx, tx, nodeID, want)
	})
}

// AddNodeTraits adds traits the node does not have yet, in one
// transaction; none is added when the node would then have too many. The
// caller holds the node's lease.
func (s *Store) AddNodeTraits(ctx context.Context, nodeID int64, traits []string) error {
	return s.db.bun.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var have []string
		if err := tx.NewSelect().Table(TableNodeTraits).Column("trait").Where("node_id = ?", nodeID).Scan(ctx, &have); err != nil {
			return s.db.wrap(err, "add node traits")
		}
		var add []string
		for _, t := range uniqueSorted(traits) {
			if !slices.Contains(have, t) {
				add = append(add, t)
			}
		}
		if n := len(have) + len(add); n > objects.MaxTraitsPerNode {
			return &TooManyTraitsError{Count: n}
		}
		return s.insertTraits(ctx, tx, nodeID, add)
	})
}

// RemoveNodeTraits removes traits from the node, or every trait when
// traits is nil, in one transaction. A trait the node does not have is a
// *TraitNotFoundError and nothing is removed. The caller holds the node's
// lease.
func (s *Store) RemoveNodeTraits(ctx context.Context, nodeID int64, traits []string) error {
	return s.db.bun.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		q := tx.NewDelete().Table(TableNodeTraits).Where("node_id = ?", nodeID)
		if traits == nil {
			_, err := q.Exec(ctx)
			return s.db.wrap(err, "remove node traits")
		}
		want := uniqueSorted(traits)
		res, err := q.Where("trait IN (?)", bun.In(want)).Exec(ctx)
		if err != nil {
			return s.db.wrap(err, "remove node traits")
		}
		if n, err := res.RowsAffected(); err != nil || int(n) != len(want) {
			if err != nil {
				return s.db.wrap(err, "remove node traits")
			}
			return s.missingTrait(ctx, nodeID, want)
		}
		return nil
	})
}

// missingTrait names the first of want the node lacks; the transaction
// rolls back the removal of the others.
func (s *Store) missingTrait(ctx context.Context, nodeID int64, want []string) error {
	have, err := s.NodeTraits(ctx, nodeID)
	if err != nil {
		return err
	}
	for _, t := range want {
		if !slices.Contains(have, t) {
			return &TraitNotFoundError{Trait: t}
		}
	}
	return &TraitNotFoundError{Trait: want[0]}
}

// insertTraits writes one Trait row per trait at the effective Trait
// version, through the objects layer as every object write.
func (s *Store) insertTraits(ctx context.Context, tx bun.Tx, nodeID int64, traits []string) error {
	if len(traits) == 0 {
		return nil
	}
	rows := make([]*Trait, 0, len(traits))
	for _, t := range traits {
		obj, err := s.reg.New("Trait")
		if err != nil {
			return err
		}
		tr := obj.(*objects.Trait)
		tr.NodeID, tr.Trait = nodeID, t
		row, _, _, err := s.forDB(tr, false)
		if err != nil {
			return err
		}
		rows = append(rows, row.(*Trait))
	}
	if _, err := tx.NewInsert().Model(&rows).Returning("NULL").Exec(ctx); err != nil {
		return s.db.wrap(err, "add node traits")
	}
	return nil
}

func uniqueSorted(in []string) []string {
	out := slices.Clone(in)
	slices.Sort(out)
	return slices.Compact(out)
}
