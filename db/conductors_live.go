package db

import (
	"context"
	"time"

	"github.com/uptrace/bun"
)

// LiveConductors lists the conductors that are online and heartbeated
// (updated_at) within timeout of the database clock, by hostname: the
// members of the hash ring (Ironic's _filter_active_conductors).
func (d *DB) LiveConductors(ctx context.Context, timeout time.Duration) ([]Conductor, error) {
	now, err := d.Now(ctx)
	if err != nil {
		return nil, err
	}
	var out []Conductor
	err = d.bun.NewSelect().Model(&out).
		Where("? = ?", bun.Ident("online"), true).
		Where("? > ?", bun.Ident("updated_at"), now.Add(-timeout)).
		OrderExpr("? ASC", bun.Ident("hostname")).
		Scan(ctx)
	if err != nil {
		return nil, d.wrap(err, "list live conductors")
	}
	return out, nil
}
