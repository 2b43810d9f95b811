package db

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"

	"github.com/rivetmetal/rivet/core/keyring"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/core/version"
	"github.com/uptrace/bun"
)

// Store reads and writes versioned objects: the DB boundary of the
// versioned core (ARCHITECTURE §3.1). Rows are converted to the latest
// version on read, keeping the conversion's changes; writes go out at the
// effective release's version of the kind (pinned, or latest), only the
// changed columns plus version and updated_at.
type Store struct {
	db     *DB
	reg    *objects.Registry
	pinner *release.Pinner
	keys   *keyring.Keyring // nil: credentials stored as given
}

// NewStore returns a Store over d. pinner gives the effective release; a
// pin reloaded on SIGHUP applies to the next write.
func NewStore(d *DB, reg *objects.Registry, pinner *release.Pinner) *Store {
	return &Store{db: d, reg: reg, pinner: pinner}
}

// DB returns the underlying database.
func (s *Store) DB() *DB { return s.db }

// Registry returns the object registry.
func (s *Store) Registry() *objects.Registry { return s.reg }

// leaseColumns are written only by the lease functions, never by a save.
var leaseColumns = []string{"reservation", "reservation_expires_at", "reservation_epoch"}

// rowFor returns a new row model for kind.
func rowFor(kind string) (any, error) {
	switch kind {
	case "Node":
		return new(Node), nil
	case "Port":
		return new(Port), nil
	case "Portgroup":
		return new(Portgroup), nil
	case "Chassis":
		return new(Chassis), nil
	case "Conductor":
		return new(Conductor), nil
	case "VolumeConnector":
		return new(VolumeConnector), nil
	case "VolumeTarget":
		return new(VolumeTarget), nil
	case "Trait":
		return new(Trait), nil
	case "DeployTemplate":
		return new(DeployTemplate), nil
	case "Runbook":
		return new(Runbook), nil
	case "Allocation":
		return new(Allocation), nil
	case "NodeHistory":
		return new(NodeHistory), nil
	case "BIOSSetting":
		return new(BIOSSetting), nil
	case "InspectionRule":
		return new(InspectionRule), nil
	case "FirmwareComponent":
		return new(FirmwareComponent), nil
	}
	return nil, fmt.Errorf("db: no table for object kind %q", kind)
}

// Load returns the object of kind whose row the query selects. Not found is
// ErrNotFound.
func (s *Store) Load(ctx context.Context, kind string, where func(*bun.SelectQuery) *bun.SelectQuery) (objects.Object, error) {
	row, err := rowFor(kind)
	if err != nil {
		return nil, err
	}
	if err := where(s.db.bun.NewSelect().Model(row)).Limit(1).Scan(ctx); err != nil {
		return nil, s.db.wrap(notFound(err), "load "+kind)
	}
	return s.fromRow(kind, row)
}

// LoadAll returns the objects of kind whose rows the query selects, in the
// query's order.
func (s *Store) LoadAll(ctx context.Context, kind string, q func(*bun.SelectQuery) *bun.SelectQuery) ([]objects.Object, error) {
	row, err := rowFor(kind)
	if err != nil {
		return nil, err
	}
	rows := reflect.New(reflect.SliceOf(reflect.TypeOf(row)))
	if err := q(s.db.bun.NewSelect().Model(rows.Interface())).Scan(ctx); err != nil {
		return nil, s.db.wrap(err, "list "+kind)
	}
	out := make([]objects.Object, 0, rows.Elem().Len())
	for i := range rows.Elem().Len() {
		obj, err := s.fromRow(kind, rows.Elem().Index(i).Interface())
		if err != nil {
			return nil, err
		}
		out = append(out, obj)
	}
	return out, nil
}

func notFound(err error) error {
	if isNoRows(err) {
		return ErrNotFound
	}
	return err
}

// fromRow builds the latest object from a row (Ironic's _from_db_object).
// Nodes take nodeFromRow, which does without reflection what
// genericFromRow does.
func (s *Store) fromRow(kind string, row any) (objects.Object, error) {
	return s.fromRowAs(kind, row, false)
}

// fromRowAs is fromRow; with readOnly the object is loaded read-only
// (objects.Registry.FromDBReadOnly), for a view that never saves it.
func (s *Store) fromRowAs(kind string, row any, readOnly bool) (objects.Object, error) {
	if n, ok := row.(*Node); ok && kind == "Node" && s.typedNodeRows() {
		return s.nodeFromRow(n, readOnly)
	}
	return s.genericFromRow(kind, row, readOnly)
}

// finishFromDB finishes loading obj from a row written at stored.
func (s *Store) finishFromDB(obj objects.Object, stored version.Version, readOnly bool) error {
	if readOnly {
		return s.reg.FromDBReadOnly(obj, stored)
	}
	return s.reg.FromDB(obj, stored)
}

// genericFromRow builds the latest object of kind from a row by the
// registry's field table.
func (s *Store) genericFromRow(kind string, row any, readOnly bool) (objects.Object, error) {
	obj, err := s.reg.New(kind)
	if err != nil {
		return nil, err
	}
	rv := reflect.ValueOf(row).Elem()
	table := s.db.bun.Table(rv.Type())
	fields, err := s.reg.FieldTable(kind)
	if err != nil {
		return nil, err
	}
	for _, f := range fields {
		col, ok := table.FieldMap[f.Name]
		if !ok {
			return nil, fmt.Errorf("db: table %s has no column for %s.%s", table.Name, kind, f.Name)
		}
		val, set := objectValue(col.Value(rv))
		if !set {
			continue // NULL in a column whose field is not nullable: keep the default
		}
		if kind == "Node" && f.Name == credentialColumn {
			if val, err = openCredentials(s.keys, val.(map[string]any)); err != nil {
				return nil, fmt.Errorf("db: node %s: %w", rv.FieldByName("UUID").String(), err)
			}
		}
		if err := s.reg.Set(obj, f.Name, val); err != nil {
			return nil, fmt.Errorf("db: %s row: %w", table.Name, err)
		}
	}
	stored, err := rowVersion(table.Name, rv)
	if err != nil {
		return nil, err
	}
	if err := s.finishFromDB(obj, stored, readOnly); err != nil {
		return nil, fmt.Errorf("db: %s row: %w", table.Name, err)
	}
	return obj, nil
}

func rowVersion(table string, rv reflect.Value) (version.Version, error) {
	vp := rv.FieldByName("Version").Interface().(*string)
	if vp == nil {
		return version.Version{}, fmt.Errorf("db: %s row has no object version; run `rivet dbsync upgrade` to check the database", table)
	}
	return parseRowVersion(table, *vp)
}

// parseRowVersion parses a row's version column.
func parseRowVersion(table, s string) (version.Version, error) {
	v, err := version.Parse(s)
	if err != nil {
		return version.Version{}, fmt.Errorf("db: %s row version: %w", table, err)
	}
	return v, nil
}

// Create inserts obj at the effective version and fills in its id and
// created_at. Every field is written (a new object has no snapshot).
func (s *Store) Create(ctx context.Context, obj objects.Object) error {
	row, _, target, err := s.forDB(obj, false)
	if err != nil {
		return err
	}
	q := s.db.bun.NewInsert().Model(row)
	if _, isNode := row.(*Node); isNode {
		q = q.ExcludeColumn(leaseColumns...)
	}
	if _, err := q.Exec(ctx); err != nil {
		return s.db.wrap(err, "create "+obj.Kind())
	}
	return s.afterWrite(obj, row, target)
}

// CreateMany is Create for several objects of one kind at once, with one
// commit: a multi-row INSERT and a SELECT of the ids the rows got (by
// uuid), in one transaction (nodes on PostgreSQL: one pipeline of prepared
// one-row INSERTs, createNodesPG). It returns one error per object, nil for
// those created. When a statement of that transaction fails (one object a
// duplicate, say), nothing of it is kept and each object is then created
// on its own with Create, in order, so that each gets its own result, as
// if it had come alone. When the commit itself fails, whether anything was
// kept is unknown and every object gets that error, as a Create whose
// commit fails does.
func (s *Store) CreateMany(ctx context.Context, objs []objects.Object) []error {
	errs := make([]error, len(objs))
	if s.db.dialect == Postgres && objs[0].Kind() == "Node" {
		if done := s.createNodesPG(ctx, objs, errs); done {
			return errs
		}
	}
	if len(objs) == 1 {
		errs[0] = s.Create(ctx, objs[0])
		return errs
	}
	rows, targets, committed, err := s.createTogether(ctx, objs)
	switch {
	case err == nil:
		for i, obj := range objs {
			errs[i] = s.afterWrite(obj, rows[i], targets[i])
		}
		return errs
	case committed:
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	for i, obj := range objs {
		errs[i] = s.Create(ctx, obj)
	}
	return errs
}

// createNodesPG is CreateMany for nodes on PostgreSQL, through the typed
// insert (insertNodesPG). done is false when that path cannot serve and
// nothing was written: the caller goes on through bun. When PostgreSQL
// refuses a statement (a duplicate, say) nothing of the batch is kept and
// each node is created on its own, as CreateMany does.
func (s *Store) createNodesPG(ctx context.Context, objs []objects.Object, errs []error) (done bool) {
	rows := make([]*Node, len(objs))
	targets := make([]version.Version, len(objs))
	for i, obj := range objs {
		if obj.Kind() != "Node" {
			return false
		}
		row, _, target, err := s.forDB(obj, false)
		if err != nil {
			return false // bun's path reports it, for this object alone
		}
		rows[i], targets[i] = row.(*Node), target
	}
	kept, err := s.insertNodesPG(ctx, rows)
	switch {
	case err == nil:
		for i, obj := range objs {
			errs[i] = s.afterWrite(obj, rows[i], targets[i])
		}
	case kept:
		for i := range errs {
			errs[i] = s.db.wrap(err, "create Node")
		}
	case len(objs) == 1:
		errs[0] = s.db.wrap(err, "create Node")
	default:
		for i, obj := range objs {
			errs[i] = s.Create(ctx, obj)
		}
	}
	return true
}

// createTogether writes objs in one transaction and returns their rows,
// ids filled in, and the versions written. committed reports that the
// error, if any, came from the commit.
func (s *Store) createTogether(ctx context.Context, objs []objects.Object) (rows []any, targets []version.Version, committed bool, err error) {
	kind := objs[0].Kind()
	rows = make([]any, len(objs))
	targets = make([]version.Version, len(objs))
	uuids := make([]string, len(objs))
	var slice reflect.Value
	for i, obj := range objs {
		if obj.Kind() != kind {
			return nil, nil, false, fmt.Errorf("db: create many: a %s among %ss", obj.Kind(), kind)
		}
		row, _, target, err := s.forDB(obj, false)
		if err != nil {
			return nil, nil, false, err
		}
		if i == 0 {
			slice = reflect.MakeSlice(reflect.SliceOf(reflect.TypeOf(row)), 0, len(objs))
		}
		rv := reflect.ValueOf(row).Elem()
		uuid := rv.FieldByName("UUID")
		if !uuid.IsValid() || uuid.Kind() != reflect.String || uuid.String() == "" {
			return nil, nil, false, fmt.Errorf("db: create many: %s rows need a uuid", kind)
		}
		rows[i], targets[i], uuids[i] = row, target, uuid.String()
		slice = reflect.Append(slice, reflect.ValueOf(row))
	}
	tx, err := s.db.bun.BeginTx(ctx, nil)
	if err != nil {
		return nil, nil, false, s.db.wrap(err, "create "+kind)
	}
	defer func() {
		if !committed {
			_ = tx.Rollback()
		}
	}()
	sp := reflect.New(slice.Type())
	sp.Elem().Set(slice)
	// No RETURNING: the rows' order in it is not guaranteed everywhere
	// (and MySQL has none); the ids are read back by uuid below.
	q := tx.NewInsert().Model(sp.Interface()).Returning("NULL")
	if kind == "Node" {
		q = q.ExcludeColumn(leaseColumns...)
	}
	if _, err := q.Exec(ctx); err != nil {
		return nil, nil, false, s.db.wrap(err, "create "+kind)
	}
	table := s.db.bun.Table(reflect.TypeOf(rows[0]).Elem())
	var ids []struct {
		ID   int64  `bun:"id"`
		UUID string `bun:"uuid"`
	}
	if err := tx.NewSelect().Table(table.Name).Column("id", "uuid").Where("uuid IN (?)", bun.In(uuids)).Scan(ctx, &ids); err != nil {
		return nil, nil, false, s.db.wrap(err, "create "+kind)
	}
	byUUID := make(map[string]int64, len(ids))
	for _, r := range ids {
		byUUID[r.UUID] = r.ID
	}
	if len(ids) != len(objs) || len(byUUID) != len(objs) {
		return nil, nil, false, fmt.Errorf("db: create many %s: %d rows read back for %d written", kind, len(ids), len(objs))
	}
	committed = true
	if err := tx.Commit(); err != nil {
		return nil, nil, true, s.db.wrap(err, "create "+kind)
	}
	for i, row := range rows {
		reflect.ValueOf(row).Elem().FieldByName("ID").SetInt(byUUID[uuids[i]])
	}
	return rows, targets, true, nil
}

// Save writes obj's changed fields (plus the conversion's, version and
// updated_at) at the effective version. A vanished row is ErrNotFound.
func (s *Store) Save(ctx context.Context, obj objects.Object) error {
	row, changed, target, err := s.forDB(obj, true)
	if err != nil {
		return err
	}
	cols := slices.DeleteFunc(changed, func(c string) bool {
		return slices.Contains(leaseColumns, c) || c == "id" || c == "created_at" || c == "updated_at"
	})
	cols = append(cols, "version", "updated_at")
	res, err := s.db.bun.NewUpdate().Model(row).Column(cols...).WherePK().Exec(ctx)
	if err != nil {
		return s.db.wrap(err, "save "+obj.Kind())
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return s.db.wrap(errors.Join(ErrNotFound, err), "save "+obj.Kind())
	}
	return s.afterWrite(obj, row, target)
}

// Delete removes obj's row.
func (s *Store) Delete(ctx context.Context, obj objects.Object) error {
	row, _, _, err := s.forDB(obj, false)
	if err != nil {
		return err
	}
	res, err := s.db.bun.NewDelete().Model(row).WherePK().Exec(ctx)
	if err != nil {
		return s.db.wrap(err, "delete "+obj.Kind())
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return s.db.wrap(errors.Join(ErrNotFound, err), "delete "+obj.Kind())
	}
	return nil
}

// forDB converts obj to the effective version and fills a row from it;
// with wantChanged it also lists the fields to write (an UPDATE's), which
// a row written whole does without (objects.Registry.ForInsert).
func (s *Store) forDB(obj objects.Object, wantChanged bool) (row any, changed []string, target version.Version, err error) {
	target, err = s.reg.Target(obj.Kind(), s.pinner.Effective())
	if err != nil {
		return nil, nil, target, err
	}
	var out objects.Object
	if wantChanged {
		out, changed, err = s.reg.ForDB(obj, target)
	} else {
		out, err = s.reg.ForInsert(obj, target)
	}
	if err != nil {
		return nil, nil, target, err
	}
	row, err = rowFor(obj.Kind())
	if err != nil {
		return nil, nil, target, err
	}
	rv := reflect.ValueOf(row).Elem()
	table := s.db.bun.Table(rv.Type())
	values, err := s.reg.Values(out)
	if err != nil {
		return nil, nil, target, err
	}
	for name, val := range values {
		if name == credentialColumn && obj.Kind() == "Node" {
			m, _ := val.(map[string]any)
			if val, err = sealCredentials(s.keys, m); err != nil {
				return nil, nil, target, fmt.Errorf("db: node %v: %w", values["uuid"], err)
			}
		}
		col, ok := table.FieldMap[name]
		if !ok {
			return nil, nil, target, fmt.Errorf("db: table %s has no column for %s.%s", table.Name, obj.Kind(), name)
		}
		if err := setRowValue(col.Value(rv), val); err != nil {
			return nil, nil, target, fmt.Errorf("db: %s.%s: %w", table.Name, name, err)
		}
	}
	ts := target.String()
	rv.FieldByName("Version").Set(reflect.ValueOf(&ts))
	return row, changed, target, nil
}

// afterWrite copies what the database assigned back into obj and takes a
// new snapshot: nothing is changed after a successful write.
func (s *Store) afterWrite(obj objects.Object, row any, _ version.Version) error {
	rv := reflect.ValueOf(row).Elem()
	for _, name := range []string{"id", "created_at", "updated_at"} {
		col := s.db.bun.Table(rv.Type()).FieldMap[name]
		if val, set := objectValue(col.Value(rv)); set {
			if err := s.reg.Set(obj, name, val); err != nil {
				return err
			}
		}
	}
	return s.reg.ResetChanges(obj)
}

// GetNode returns the node whose UUID or name is ident.
func (s *Store) GetNode(ctx context.Context, ident string) (*objects.Node, error) {
	col := "name"
	if looksLikeUUID(ident) {
		col = "uuid"
	}
	row, err := s.loadNodeBy(ctx, col, ident)
	if err != nil {
		return nil, err
	}
	obj, err := s.fromRow("Node", row)
	if err != nil {
		return nil, err
	}
	return obj.(*objects.Node), nil
}

// getNodeBun is GetNode through bun's query builder and scanner, the
// reference TestGetNodeTypedMatchesBun holds the typed read to.
func (s *Store) getNodeBun(ctx context.Context, col, ident string) (*objects.Node, error) {
	obj, err := s.Load(ctx, "Node", func(q *bun.SelectQuery) *bun.SelectQuery { return q.Where("?TableAlias.? = ?", bun.Ident(col), ident) })
	if err != nil {
		return nil, err
	}
	return obj.(*objects.Node), nil
}

// looksLikeUUID reports whether s has the 8-4-4-4-12 hex form (Ironic
// treats such identifiers as UUIDs, anything else as a name).
func looksLikeUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, r := range s {
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if r != '-' {
				return false
			}
		case !('0' <= r && r <= '9' || 'a' <= r && r <= 'f' || 'A' <= r && r <= 'F'):
			return false
		}
	}
	return true
}
