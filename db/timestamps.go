package db

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"github.com/rivetmetal/rivet/core/clock"
)

// Timestamps are the created_at and updated_at columns of a row, embedded in
// every model but Service (whose updated_at is a heartbeat). As in Ironic,
// created_at is set on insert and updated_at on every update; an update that
// lists its columns must list updated_at to have it written.
type Timestamps struct {
	CreatedAt time.Time    `bun:"created_at,notnull"`
	UpdatedAt bun.NullTime `bun:"updated_at"`
}

var _ bun.BeforeAppendModelHook = (*Timestamps)(nil)

// BeforeAppendModel stamps the row in UTC as bun builds an INSERT or UPDATE.
func (t *Timestamps) BeforeAppendModel(_ context.Context, q bun.Query) error {
	switch q.(type) {
	case *bun.InsertQuery:
		t.stampInsert()
	case *bun.UpdateQuery:
		t.UpdatedAt = bun.NullTime{Time: clock.Now()}
	}
	return nil
}

// stampInsert sets created_at, unless already set, as an INSERT does.
func (t *Timestamps) stampInsert() {
	if t.CreatedAt.IsZero() {
		t.CreatedAt = clock.Now()
	}
}
