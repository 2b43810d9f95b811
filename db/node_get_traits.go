package db

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/rivetmetal/rivet/core/objects"
)

// A node and its traits in one statement.
//
// GET /v1/nodes/{uuid} shows the node's traits from API 1.37. Read by a
// second query (NodeTraits), they cost a second database/sql round, a
// second read transaction on SQLite and a second round trip to
// PostgreSQL: about 7 % of the GET's CPU on the embedded database
// (docs/performance.md, issue 32). Here they are one more column of the
// node's own SELECT, a correlated subquery aggregating the trait names
// into a JSON array, in the order NodeTraits gives (ORDER BY trait, the
// database's collation). MySQL keeps the second query: its JSON_ARRAYAGG
// takes no ORDER BY, and GROUP_CONCAT is cut at group_concat_max_len
// (1,024 bytes by default, less than a node's 50 traits may take).

// nodeTraitsColumn returns the expression selecting, as text, the JSON
// array of the traits of the node whose id is idCol, sorted; "" on
// MySQL, which reads them apart.
func nodeTraitsColumn(d Dialect, idCol string) string {
	switch d {
	case SQLite:
		// json_group_array over no rows is '[]'. It aggregates the rows
		// in the order the inner SELECT gives them, which the index on
		// (node_id, trait) yields sorted (a co-routine, no sort); an
		// ORDER BY inside the aggregate (SQLite 3.44) would sort them
		// again in a temporary index on every read, as costly as the
		// second query was. TestGetNodeWithTraits holds the order.
		return "(SELECT json_group_array(trait) FROM (SELECT trait FROM " + TableNodeTraits + " WHERE node_id = " + idCol + " ORDER BY trait))"
	case Postgres:
		// json_agg over no rows is NULL; ::text keeps the column one
		// rawScan decodes (text).
		return "COALESCE((SELECT json_agg(trait ORDER BY trait) FROM " + TableNodeTraits + " WHERE node_id = " + idCol + ")::text, '[]')"
	}
	return ""
}

// GetNodeWithTraits returns the node whose UUID or name is ident and its
// traits, sorted (never nil), as GetNode and NodeTraits would, in one
// statement on SQLite and PostgreSQL.
func (s *Store) GetNodeWithTraits(ctx context.Context, ident string) (*objects.Node, []string, error) {
	if s.db.dialect == MySQL {
		n, err := s.GetNode(ctx, ident)
		if err != nil {
			return nil, nil, err
		}
		traits, err := s.NodeTraits(ctx, n.ID)
		if err != nil {
			return nil, nil, err
		}
		return n, traits, nil
	}
	col := "name"
	if looksLikeUUID(ident) {
		col = "uuid"
	}
	var text string
	row, err := s.loadNode(ctx, col, ident, &text)
	if err != nil {
		return nil, nil, err
	}
	traits, err := decodeTraits(text)
	if err != nil {
		return nil, nil, s.db.wrap(err, "load Node")
	}
	obj, err := s.fromRow("Node", row)
	if err != nil {
		return nil, nil, err
	}
	return obj.(*objects.Node), traits, nil
}

// decodeTraits decodes nodeTraitsColumn's JSON array.
func decodeTraits(text string) ([]string, error) {
	traits := []string{}
	if text == "[]" {
		return traits, nil
	}
	if err := json.Unmarshal([]byte(text), &traits); err != nil {
		return nil, fmt.Errorf("db: node traits %q: %w", text, err)
	}
	return traits, nil
}
