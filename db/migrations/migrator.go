package migrations

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/rivetmetal/rivet/db"
	"github.com/uptrace/bun/migrate"
)

// Migrator applies the schema migrations of one database.
type Migrator struct {
	db  *db.DB
	set *migrate.Migrations
	m   *migrate.Migrator
}

// NewMigrator returns a Migrator for d with its dialect's migrations. It
// marks a migration applied only once it succeeded.
func NewMigrator(d *db.DB) (*Migrator, error) {
	set, err := Set(d.Dialect())
	if err != nil {
		return nil, err
	}
	return newMigrator(d, set), nil
}

func newMigrator(d *db.DB, set *migrate.Migrations) *Migrator {
	m := migrate.NewMigrator(d.Bun(), set,
		migrate.WithMarkAppliedOnSuccess(true),
		migrate.WithTableName(TableMigrations),
		migrate.WithLocksTableName(TableLocks))
	return &Migrator{db: d, set: set, m: m}
}

// NewMigratorUntil returns a Migrator for d that applies its dialect's
// migrations up to and including the one named last (e.g.
// "20261122060000_conductor_plugins"): the schema an older release left,
// for upgrade tests.
func NewMigratorUntil(d *db.DB, last string) (*Migrator, error) {
	m, err := NewMigrator(d)
	if err != nil {
		return nil, err
	}
	set := migrate.NewMigrations()
	found := false
	for _, mg := range m.set.Sorted() {
		if !found {
			set.Add(mg)
		}
		found = found || mg.String() == last
	}
	if !found {
		return nil, fmt.Errorf("migrations for %s: no migration named %s", d.Dialect(), last)
	}
	return newMigrator(d, set), nil
}

// lockTableDDL creates bun/migrate's lock table with one more column,
// locked_at, filled by the database when bun inserts the lock row, so a
// refused run can say since when the lock is held. bun's own Init then finds
// the table and leaves it alone.
var lockTableDDL = map[db.Dialect]string{
	db.Postgres: `CREATE TABLE IF NOT EXISTS bun_migration_locks (
    id BIGSERIAL PRIMARY KEY,
    table_name VARCHAR(255) NOT NULL UNIQUE,
    locked_at TIMESTAMPTZ NOT NULL DEFAULT CURRENT_TIMESTAMP)`,
	db.MySQL: `CREATE TABLE IF NOT EXISTS bun_migration_locks (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    table_name VARCHAR(255) NOT NULL UNIQUE,
    locked_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`,
	db.SQLite: `CREATE TABLE IF NOT EXISTS bun_migration_locks (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    table_name VARCHAR(255) NOT NULL UNIQUE,
    locked_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP)`,
}

// Init creates the bookkeeping tables if they are missing. Concurrent runs
// are safe: PostgreSQL fails all but one of several simultaneous CREATE
// TABLE IF NOT EXISTS of one table (a catalogue unique violation, or
// "already exists"), and a retry then finds the table.
func (m *Migrator) Init(ctx context.Context) error {
	const attempts = 5
	for attempt := 1; ; attempt++ {
		err := m.createTables(ctx)
		if err == nil || attempt == attempts || !isCreateRace(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(attempt) * 20 * time.Millisecond):
		}
	}
}

// PostgreSQL SQLSTATEs of a CREATE that lost a race: duplicate_table, and
// duplicate_object (two concurrent CREATE TABLE IF NOT EXISTS can both pass
// the existence check and collide on the table's row type).
const (
	pgDuplicateTable  = "42P07"
	pgDuplicateObject = "42710"
)

func isCreateRace(err error) bool {
	var pgErr *pgconn.PgError
	return db.IsUniqueViolation(err) ||
		(errors.As(err, &pgErr) && (pgErr.Code == pgDuplicateTable || pgErr.Code == pgDuplicateObject))
}

func (m *Migrator) createTables(ctx context.Context) error {
	if _, err := m.db.Bun().ExecContext(ctx, lockTableDDL[m.db.Dialect()]); err != nil {
		return fmt.Errorf("migrations: create %s: %w", TableLocks, err)
	}
	if err := m.m.Init(ctx); err != nil {
		return fmt.Errorf("migrations: create %s: %w", TableMigrations, err)
	}
	return nil
}

// LockedError says another run holds the migration lock.
type LockedError struct {
	// Since is when the lock was taken (UTC); zero if unknown.
	Since time.Time
}

// Error says since when the lock is held and how to clear a stale one.
func (e *LockedError) Error() string {
	since := "an unknown time"
	if !e.Since.IsZero() {
		since = e.Since.UTC().Format(time.RFC3339)
	}
	return "another dbsync holds the migration lock since " + since +
		"; if that run crashed, run `rivet dbsync unlock`"
}

// Lock takes the migration lock, or returns a *LockedError if another run
// holds it. The caller must Init first and Unlock after.
func (m *Migrator) Lock(ctx context.Context) error {
	err := m.m.Lock(ctx)
	if err == nil {
		return nil
	}
	if !db.IsUniqueViolation(err) {
		return fmt.Errorf("migrations: take the migration lock: %w", err)
	}
	since, _, _ := m.lockedSince(ctx)
	return &LockedError{Since: since}
}

func (m *Migrator) lockedSince(ctx context.Context) (time.Time, bool, error) {
	var t time.Time
	err := m.db.Bun().NewSelect().Table(TableLocks).Column("locked_at").
		OrderExpr("id").Limit(1).Scan(ctx, &t)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, false, nil
	}
	if err != nil {
		return time.Time{}, false, fmt.Errorf("migrations: read the migration lock: %w", err)
	}
	return t.UTC(), true, nil
}

// Unlock removes the migration lock, whoever holds it: the escape hatch
// after a crashed run. It reports whether a lock was held and since when.
func (m *Migrator) Unlock(ctx context.Context) (held bool, since time.Time, err error) {
	has, err := m.db.HasTable(ctx, TableLocks)
	if err != nil || !has {
		return false, time.Time{}, err
	}
	since, held, err = m.lockedSince(ctx)
	if err != nil {
		return false, time.Time{}, err
	}
	if err := m.m.Unlock(ctx); err != nil {
		return false, time.Time{}, fmt.Errorf("migrations: release the migration lock: %w", err)
	}
	return held, since, nil
}

// Migrate takes the lock, runs precheck (if not nil) and applies every
// pending migration, in order. It returns the names applied; none when the
// schema is current. precheck runs under the lock so nothing changes the
// data it checks before the schema moves.
func (m *Migrator) Migrate(ctx context.Context, precheck func(context.Context) error) (applied []string, err error) {
	if err := m.Init(ctx); err != nil {
		return nil, err
	}
	if err := m.Lock(ctx); err != nil {
		return nil, err
	}
	defer func() {
		// Unlock even when ctx was cancelled: a leftover lock needs a human.
		if uerr := m.m.Unlock(context.WithoutCancel(ctx)); uerr != nil && err == nil {
			err = fmt.Errorf("migrations: release the migration lock: %w", uerr)
		}
	}()
	if precheck != nil {
		if err := precheck(ctx); err != nil {
			return nil, err
		}
	}
	group, err := m.m.Migrate(ctx)
	for _, mg := range group.Migrations {
		applied = append(applied, mg.String())
	}
	if err != nil {
		if len(applied) > 0 {
			applied = applied[:len(applied)-1] // the last one failed
		}
		return applied, fmt.Errorf("migrations: %w", err)
	}
	return applied, nil
}
