package db

import (
	"context"
	"reflect"
	"slices"

	"github.com/uptrace/bun"
)

// ConductorSortKeys are the conductors columns a listing may sort on
// (Ironic's conductors table less drivers, a JSON list).
var ConductorSortKeys = []string{"id", "hostname", "conductor_group", "online", "version", "created_at", "updated_at"}

// ConductorPage is one page of a conductor listing: sorted by SortKey (one
// of ConductorSortKeys) then id, after the conductor named Marker.
type ConductorPage struct {
	Limit   int
	Marker  string
	SortKey string
	Desc    bool
}

// ConductorByHostname returns the registered conductor with hostname,
// online or not; ErrNotFound when there is none.
func (d *DB) ConductorByHostname(ctx context.Context, hostname string) (*Conductor, error) {
	c := new(Conductor)
	if err := d.bun.NewSelect().Model(c).Where("? = ?", bun.Ident("hostname"), hostname).Limit(1).Scan(ctx); err != nil {
		return nil, d.wrap(notFound(err), "get conductor "+hostname)
	}
	return c, nil
}

// ListConductors returns one page of the registered conductors, online or
// not (Ironic's Conductor.list). A marker naming no conductor is
// ErrNotFound.
func (d *DB) ListConductors(ctx context.Context, pg ConductorPage) ([]Conductor, error) {
	key := pg.SortKey
	if !slices.Contains(ConductorSortKeys, key) {
		key = "id"
	}
	dir := "ASC"
	if pg.Desc {
		dir = "DESC"
	}
	var out []Conductor
	q := d.bun.NewSelect().Model(&out)
	if pg.Marker != "" {
		m, err := d.ConductorByHostname(ctx, pg.Marker)
		if err != nil {
			return nil, err
		}
		cmp := ">"
		if pg.Desc {
			cmp = "<"
		}
		// The marker row's value of the sort column, by the model's field.
		val := d.bun.Table(reflect.TypeOf(*m)).FieldMap[key].Value(reflect.ValueOf(m).Elem()).Interface()
		if key == "id" {
			q = q.Where("c.id "+cmp+" ?", m.ID)
		} else {
			q = q.Where("c.? "+cmp+" ? OR (c.? = ? AND c.id "+cmp+" ?)", bun.Ident(key), val, bun.Ident(key), val, m.ID)
		}
	}
	q = q.OrderExpr("c.? "+dir, bun.Ident(key))
	if key != "id" {
		q = q.OrderExpr("c.id " + dir)
	}
	if pg.Limit > 0 {
		q = q.Limit(int64(pg.Limit))
	}
	if err := q.Scan(ctx); err != nil {
		return nil, d.wrap(err, "list conductors")
	}
	return out, nil
}
