package onlinemigrations

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/rivetmetal/rivet/core/catalog"
	"github.com/rivetmetal/rivet/db"
	"github.com/uptrace/bun"
)

// BackfillNodeInterfacesName names the migration that fills the node
// interface columns added in release 0.2.
const BackfillNodeInterfacesName = "backfill_node_interfaces"

// BackfillNodeInterfacesMinServiceVersion is release 0.2's service version:
// a 0.1 service cannot read what the migration writes (Node 1.1).
const BackfillNodeInterfacesMinServiceVersion = 2

// The Node versions the backfill moves rows between: 1.1 only adds the
// interface fields, so setting the columns and the version is the whole
// conversion.
const (
	nodeWithoutInterfaces = "1.0"
	nodeWithInterfaces    = "1.1"
)

// BackfillNodeInterfaces returns the migration that gives every node row
// whose interface columns are NULL its hardware type's default
// implementations and brings rows written at Node 1.0 (by release 0.1, or
// a service pinned to it) to Node 1.1, in batches.
//
// The defaults come from the catalog: Rivet's own hardware types as built
// in (catalog.Known), overlaid by what registered conductors offer, overlaid
// by what live conductors offer. A node whose hardware type none of these
// knows is skipped and reported on Notes, not counted as to do: its
// columns stay NULL, which every reader takes as "the hardware type's
// default", so nothing waits on it; a later run fills it once a conductor
// serving it has registered.
func BackfillNodeInterfaces(o Options) Migration {
	if o.LiveTimeout <= 0 {
		o.LiveTimeout = db.DefaultServiceTimeout
	}
	if o.Notes == nil {
		o.Notes = io.Discard
	}
	b := backfill{o: o, walk: new(Walker)}
	return Migration{
		Name:              BackfillNodeInterfacesName,
		MinServiceVersion: BackfillNodeInterfacesMinServiceVersion,
		Options:           []string{"workers"},
		Run:               b.run,
		Pending: func(ctx context.Context, d *db.DB) (int, error) {
			total, _, err := b.pass(ctx, d, -1, 1)
			return total, err
		},
	}
}

type backfill struct {
	o Options
	// walk remembers where the previous pass of this run stopped.
	walk *Walker
}

// interfaceColumns are the node columns the backfill fills: the 1.1 fields
// and network_interface, which release 0.1 left NULL too.
func interfaceColumns() []string {
	var out []string
	for _, iface := range catalog.Types11() {
		out = append(out, catalog.Field(iface))
	}
	return out
}

// needsBackfill selects the rows the backfill has something to do for:
// written at 1.0, or with a NULL interface column.
func needsBackfill() Expr {
	conds := []string{"version = ?"}
	for _, c := range interfaceColumns() {
		conds = append(conds, c+" IS NULL")
	}
	return Expr{SQL: "(" + strings.Join(conds, " OR ") + ")", Args: []any{nodeWithoutInterfaces}}
}

// catalog is what the backfill takes defaults from; see
// BackfillNodeInterfaces.
func (b backfill) catalog(ctx context.Context, d *db.DB) (*catalog.Catalog, error) {
	all, err := d.HardwareInterfaces(ctx, nil)
	if err != nil {
		return nil, err
	}
	live, err := d.LiveConductors(ctx, b.o.LiveTimeout)
	if err != nil {
		return nil, err
	}
	hosts := make([]string, len(live))
	for i, c := range live {
		hosts[i] = c.Hostname
	}
	liveRows, err := d.HardwareInterfaces(ctx, hosts)
	if err != nil {
		return nil, err
	}
	return catalog.Known().Overlay(catalog.FromRows(all)).Overlay(catalog.FromRows(liveRows)), nil
}

func (b backfill) run(ctx context.Context, d *db.DB, maxCount int, opts map[string]string) (int, int, error) {
	workers := b.o.Workers
	if v, ok := opts["workers"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxWorkers {
			return 0, 0, badArgument("option %s.workers=%s: want a whole number from 1 to %d", BackfillNodeInterfacesName, v, maxWorkers)
		}
		workers = n
	}
	if workers <= 0 {
		workers = DefaultWorkers(d.Dialect())
	}
	return b.pass(ctx, d, maxCount, workers)
}

// maxWorkers bounds the workers option: each is a database connection
// writing flat out.
const maxWorkers = 16

// pass backfills at most maxCount rows (0: all; -1: none, only count),
// and returns (rows to do at the start, rows done). One scan counts the
// rows to do per hardware type (and those of unknown types, to skip);
// then one walk by id updates every known type's rows together, in
// chunks, going on from where the previous pass stopped (Walker).
func (b backfill) pass(ctx context.Context, d *db.DB, maxCount, workers int) (total, migrated int, err error) {
	cat, err := b.catalog(ctx, d)
	if err != nil {
		return 0, 0, err
	}
	known := cat.HardwareTypes()
	where, set := b.statements(cat, known)
	need := needsBackfill()
	unknown := Expr{SQL: need.SQL, Args: need.Args}
	if len(known) > 0 {
		unknown = Expr{SQL: "driver NOT IN (?) AND " + need.SQL, Args: append([]any{bun.List(known)}, need.Args...)}
	}
	var groups []struct {
		Driver string `bun:"driver"`
		N      int    `bun:"n"`
	}
	if err := d.Bun().NewSelect().Table(db.TableNodes).ColumnExpr("driver, COUNT(*) AS n").
		Where("("+where.SQL+") OR ("+unknown.SQL+")", append(slices.Clone(where.Args), unknown.Args...)...).
		GroupExpr("driver").OrderExpr("driver").Scan(ctx, &groups); err != nil {
		return 0, 0, fmt.Errorf("count nodes to backfill: %w", err)
	}
	var skipped []string
	skippedRows := 0
	for _, g := range groups {
		if !cat.Has(g.Driver) {
			skipped, skippedRows = append(skipped, g.Driver), skippedRows+g.N
			continue
		}
		total += g.N
	}
	if maxCount < 0 {
		return total, 0, nil
	}
	if total > 0 {
		if migrated, err = b.walk.update(ctx, d, db.TableNodes, where, set, maxCount, b.o.ChunkSize, workers); err != nil {
			return 0, 0, fmt.Errorf("backfill nodes: %w", err)
		}
	}
	if len(skipped) > 0 {
		fmt.Fprintf(b.o.Notes, "%s: skipped %d node(s) of hardware type(s) %s, which no registered conductor serves: "+
			"their interfaces stay unset (the hardware type's defaults apply when a conductor serves it); "+
			"run again once one has registered.\n", BackfillNodeInterfacesName, skippedRows, strings.Join(skipped, ", "))
	}
	return total, migrated, nil
}

// statements are the WHERE and SET of the backfill of the hardware types
// hws (known to cat): a row of type hw written at 1.0, or with a NULL
// column hw has a default for, gets every such default and version 1.1. A
// column hw has no default for stays NULL. One statement serves every
// type: the WHERE has a term per type, the SET a CASE on driver per
// column.
func (b backfill) statements(cat *catalog.Catalog, hws []string) (where, set Expr) {
	if len(hws) == 0 {
		return Expr{SQL: "1 = 0"}, Expr{SQL: "version = version"}
	}
	var terms []string
	sets, setArgs := []string{"version = ?"}, []any{nodeWithInterfaces}
	cases := map[string][]any{} // column → hw, default, hw, default, …
	for _, hw := range hws {
		conds := []string{"version = ?"}
		where.Args = append(where.Args, hw, nodeWithoutInterfaces)
		for _, iface := range catalog.Types11() {
			def := cat.Impls(hw, iface).Default
			if def == "" {
				continue
			}
			col := catalog.Field(iface)
			conds = append(conds, col+" IS NULL")
			cases[col] = append(cases[col], hw, def)
		}
		terms = append(terms, "(driver = ? AND ("+strings.Join(conds, " OR ")+"))")
	}
	for _, iface := range catalog.Types11() {
		col := catalog.Field(iface)
		args := cases[col]
		if len(args) == 0 {
			continue
		}
		sets = append(sets, col+" = COALESCE("+col+", CASE driver"+strings.Repeat(" WHEN ? THEN ?", len(args)/2)+" END)")
		setArgs = append(setArgs, args...)
	}
	where.SQL = "(" + strings.Join(terms, " OR ") + ")"
	return where, Expr{SQL: strings.Join(sets, ", "), Args: setArgs}
}
