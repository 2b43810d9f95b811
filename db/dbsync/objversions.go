package dbsync

import (
	"context"
	"fmt"
	"slices"

	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/db"
	"github.com/uptrace/bun"
)

// CheckObjectVersions checks that every row of every object table has a
// version the release table supports (any release's, HEAD included). A
// missing table is tolerated only when tolerateMissing is set (upgrade
// creates it) and the kind's versions include 1.0 (the kind is new), as
// Ironic's check_versions. It returns an *IncompatibleError listing every
// problem at once.
func CheckObjectVersions(ctx context.Context, d *db.DB, table *release.Table, tolerateMissing bool) error {
	supported := table.SupportedObjectVersions()
	tables, err := d.Tables(ctx)
	if err != nil {
		return err
	}
	var problems []TableProblem
	objTables := db.ObjectTables()
	for _, kind := range db.ObjectKinds() {
		name := objTables[kind]
		var vers []string
		for _, v := range supported[kind] {
			vers = append(vers, v.String())
		}
		p := TableProblem{Table: name, Kind: kind, Supported: vers}
		if _, found := slices.BinarySearch(tables, name); !found {
			if !tolerateMissing || !slices.Contains(vers, "1.0") {
				p.Missing = true
				problems = append(problems, p)
			}
			continue
		}
		rows, err := offendingVersions(ctx, d, name, vers)
		if err != nil {
			return err
		}
		if len(rows) > 0 {
			p.Rows = rows
			problems = append(problems, p)
		}
	}
	if len(problems) > 0 {
		return &IncompatibleError{Release: release.Current, Problems: problems}
	}
	return nil
}

// offendingVersions counts the rows of table whose version is NULL or not
// in supported, per version.
func offendingVersions(ctx context.Context, d *db.DB, table string, supported []string) (map[string]int, error) {
	q := d.Bun().NewSelect().Table(table).
		ColumnExpr("version").ColumnExpr("COUNT(*)").
		GroupExpr("version")
	if len(supported) > 0 {
		q = q.Where("version IS NULL OR version NOT IN (?)", bun.List(supported))
	}
	rows, err := q.Rows(ctx)
	if err != nil {
		return nil, fmt.Errorf("dbsync: check versions in %s: %w", table, err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var v *string
		var n int
		if err := rows.Scan(&v, &n); err != nil {
			return nil, fmt.Errorf("dbsync: check versions in %s: %w", table, err)
		}
		key := "NULL"
		if v != nil {
			key = *v
		}
		out[key] += n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("dbsync: check versions in %s: %w", table, err)
	}
	return out, nil
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
