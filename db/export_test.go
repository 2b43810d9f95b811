package db

import (
	"context"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/uptrace/bun"
)

// FromRowPaths builds a node from row both ways: the typed nodeFromRow
// (what fromRow uses) and the generic, registry-driven path.
func (s *Store) FromRowPaths(row *Node) (typed, generic objects.Object, typedErr, genericErr error) {
	typed, typedErr = s.nodeFromRow(row, false)
	generic, genericErr = s.genericFromRow("Node", row, false)
	return typed, generic, typedErr, genericErr
}

// TypedNodeRows reports whether fromRow takes nodeFromRow for s's registry.
func (s *Store) TypedNodeRows() bool { return s.typedNodeRows() }

// GetNodeBun is GetNode through bun's query builder and scanner.
func (s *Store) GetNodeBun(ctx context.Context, col, ident string) (*objects.Node, error) {
	return s.getNodeBun(ctx, col, ident)
}

// InsertNodesPG writes rows through the typed PostgreSQL insert.
func (s *Store) InsertNodesPG(ctx context.Context, rows []*Node) (kept bool, err error) {
	return s.insertNodesPG(ctx, rows)
}

// PreparedStatements is how many statements d holds prepared.
func (d *DB) PreparedStatements() int {
	n := 0
	d.stmts.Range(func(_, _ any) bool { n++; return true })
	return n
}

// ListNodesBun is ListNodes through LoadAll: bun's scanner.
func (s *Store) ListNodesBun(ctx context.Context, q func(*bun.SelectQuery) *bun.SelectQuery) ([]*objects.Node, error) {
	objs, err := s.LoadAll(ctx, "Node", q)
	if err != nil {
		return nil, err
	}
	out := make([]*objects.Node, len(objs))
	for i, o := range objs {
		out[i] = o.(*objects.Node)
	}
	return out, nil
}
