package migrations

import (
	"embed"
	"fmt"
	"io/fs"

	"github.com/rivetmetal/rivet/db"
	"github.com/uptrace/bun/migrate"
)

//go:embed sql
var files embed.FS

// Table names bun/migrate uses for its bookkeeping.
const (
	TableMigrations = "bun_migrations"
	TableLocks      = "bun_migration_locks"
)

// Files returns the migration files of one dialect, rooted at its
// directory. The policy test and Set read the same files.
func Files(d db.Dialect) (fs.FS, error) {
	sub, err := fs.Sub(files, "sql/"+string(d))
	if err != nil {
		return nil, fmt.Errorf("migrations for %s: %w", d, err)
	}
	return sub, nil
}

// Set returns the migrations of one dialect, for bun/migrate.
func Set(d db.Dialect) (*migrate.Migrations, error) {
	sub, err := Files(d)
	if err != nil {
		return nil, err
	}
	ms := migrate.NewMigrations()
	if err := ms.Discover(sub); err != nil {
		return nil, fmt.Errorf("migrations for %s: %w", d, err)
	}
	if len(ms.Sorted()) == 0 {
		return nil, fmt.Errorf("migrations for %s: none found", d)
	}
	return ms, nil
}
