package db

import "github.com/rivetmetal/rivet/core/objects"

// FromRowPaths builds a node from row both ways: the typed nodeFromRow
// (what fromRow uses) and the generic, registry-driven path.
func (s *Store) FromRowPaths(row *Node) (typed, generic objects.Object, typedErr, genericErr error) {
	typed, typedErr = s.nodeFromRow(row)
	generic, genericErr = s.genericFromRow("Node", row)
	return typed, generic, typedErr, genericErr
}

// TypedNodeRows reports whether fromRow takes nodeFromRow for s's registry.
func (s *Store) TypedNodeRows() bool { return s.typedNodeRows() }
