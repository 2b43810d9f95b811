package db

import (
	"context"
	"database/sql/driver"
	"encoding/json"
	"fmt"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/uptrace/bun"
)

// Trait is a row of the node_traits table: one trait of one node.
type Trait struct {
	bun.BaseModel `bun:"table:node_traits,alias:nt"`

	ID     int64  `bun:"id,pk,autoincrement"`
	NodeID int64  `bun:"node_id,notnull"`
	Trait  string `bun:"trait,notnull"`
	Timestamps
	// Version is the Trait object version the row was written at.
	Version *string `bun:"version"`
}

// DeployTemplate is a row of the deploy_templates table.
type DeployTemplate struct {
	bun.BaseModel `bun:"table:deploy_templates,alias:dt"`

	ID    int64      `bun:"id,pk,autoincrement"`
	UUID  string     `bun:"uuid,notnull"`
	Name  string     `bun:"name,notnull"`
	Steps JSONList   `bun:"steps"`
	Extra JSONObject `bun:"extra"`
	Timestamps
	// Version is the DeployTemplate object version the row was written at.
	Version *string `bun:"version"`
}

// Runbook is a row of the runbooks table.
type Runbook struct {
	bun.BaseModel `bun:"table:runbooks,alias:rb"`

	ID             int64      `bun:"id,pk,autoincrement"`
	UUID           string     `bun:"uuid,notnull"`
	Name           string     `bun:"name,notnull"`
	Steps          JSONList   `bun:"steps"`
	DisableRamdisk *bool      `bun:"disable_ramdisk"`
	Extra          JSONObject `bun:"extra"`
	Public         *bool      `bun:"public"`
	Owner          *string    `bun:"owner"`
	Timestamps
	// Version is the Runbook object version the row was written at.
	Version *string `bun:"version"`
}

// JSONList is a JSON list of objects (a template's or runbook's steps)
// stored in a text column; nil is stored as "[]". Numbers decode as
// json.Number, as in JSONObject.
type JSONList []map[string]any

// Value implements driver.Valuer.
func (l JSONList) Value() (driver.Value, error) {
	if len(l) == 0 {
		return "[]", nil
	}
	b, err := json.Marshal([]map[string]any(l))
	if err != nil {
		return nil, fmt.Errorf("encode JSON list: %w", err)
	}
	return string(b), nil
}

// Scan implements sql.Scanner.
func (l *JSONList) Scan(src any) error {
	*l = nil
	return scanJSON(src, (*[]map[string]any)(l))
}

// DeployTemplatesByName returns the deploy templates whose name is one of
// names, in name order (Ironic's DeployTemplate.list_by_names): what a
// deploy matches against the instance's traits.
func (s *Store) DeployTemplatesByName(ctx context.Context, names []string) ([]*objects.DeployTemplate, error) {
	if len(names) == 0 {
		return nil, nil
	}
	objs, err := s.LoadAll(ctx, "DeployTemplate", func(q *bun.SelectQuery) *bun.SelectQuery {
		return q.Where("?TableAlias.name IN (?)", bun.In(names)).Order("name")
	})
	if err != nil {
		return nil, err
	}
	out := make([]*objects.DeployTemplate, len(objs))
	for i, o := range objs {
		out[i] = o.(*objects.DeployTemplate)
	}
	return out, nil
}
