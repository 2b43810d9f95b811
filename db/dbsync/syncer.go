package dbsync

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/migrations"
	"github.com/rivetmetal/rivet/db/onlinemigrations"
)

// Syncer runs the dbsync commands against the database of one connection
// URL. Each command opens the database, does its work and closes it.
type Syncer struct {
	// Connection is the [database] connection URL.
	Connection string
	// Options tune the connection pool.
	Options db.Options
	// Out receives the commands' normal output (stdout).
	Out io.Writer
	// Release is the release table checked against; nil means
	// release.Default().
	Release *release.Table
	// Registry holds the online data migrations; nil means none.
	Registry *onlinemigrations.Registry
	// Report shows online migration progress; nil prints ironic-dbsync's
	// lines on Out.
	Report onlinemigrations.Reporter
	// BatchSize is the budget of each pass of online-data-migrations
	// without a max count; 0 means onlinemigrations.BatchSize.
	BatchSize int
	// ServiceTimeout is how recent a heartbeat must be for a service to
	// count as live; 0 means db.DefaultServiceTimeout.
	ServiceTimeout time.Duration
	// ForgetTimeout is how long a service that is not live still counts
	// for the online migration gate ([DEFAULT] service_forget_timeout); 0
	// means db.DefaultServiceForgetTimeout.
	ForgetTimeout time.Duration
}

func (s *Syncer) open(ctx context.Context) (*db.DB, *migrations.Migrator, error) {
	d, err := db.Open(ctx, s.Connection, s.Options)
	if err != nil {
		return nil, nil, err
	}
	m, err := migrations.NewMigrator(d)
	if err != nil {
		d.Close()
		return nil, nil, err
	}
	return d, m, nil
}

func (s *Syncer) release() *release.Table {
	if s.Release != nil {
		return s.Release
	}
	return release.Default()
}

func (s *Syncer) printf(format string, args ...any) {
	fmt.Fprintf(s.Out, format, args...)
}

// CreateSchema creates the schema in an empty database. A database that
// has any table is refused: use Upgrade for it.
func (s *Syncer) CreateSchema(ctx context.Context) error {
	d, m, err := s.open(ctx)
	if err != nil {
		return err
	}
	defer d.Close()
	tables, err := d.Tables(ctx)
	if err != nil {
		return err
	}
	if len(tables) > 0 {
		return notEmpty(tables)
	}
	applied, err := m.Migrate(ctx, func(ctx context.Context) error {
		// Under the lock: a concurrent create-schema may have won.
		st, err := m.Status(ctx)
		if err == nil && len(st.Applied)+len(st.Unknown) > 0 {
			return notEmpty([]string{migrations.TableMigrations})
		}
		return err
	})
	if err != nil {
		return err
	}
	s.printf("Created the schema: applied %s.\n", strings.Join(applied, ", "))
	return nil
}

func notEmpty(tables []string) error {
	return refusal("create-schema needs an empty database, but it has tables (%s): "+
		"run `rivet dbsync upgrade` to bring an existing schema up to date", strings.Join(tables, ", "))
}

// Upgrade checks that every object row is readable by this release, then
// applies the pending schema migrations. Running it again applies nothing.
func (s *Syncer) Upgrade(ctx context.Context) error {
	d, m, err := s.open(ctx)
	if err != nil {
		return err
	}
	defer d.Close()
	applied, err := m.Migrate(ctx, func(ctx context.Context) error {
		st, err := m.Status(ctx)
		if err != nil {
			return err
		}
		if len(st.Applied)+len(st.Unknown) == 0 {
			return nil // empty database: nothing to check (Ironic: no alembic version)
		}
		return CheckObjectVersions(ctx, d, s.release(), true)
	})
	if err != nil {
		return err
	}
	st, err := m.Status(ctx)
	if err != nil {
		return err
	}
	if len(applied) == 0 {
		s.printf("The database schema is up to date (%s).\n", st.Current())
	} else {
		s.printf("Upgraded the database schema: applied %s.\n", strings.Join(applied, ", "))
	}
	if len(st.Unknown) > 0 {
		s.printf("The database also has migrations of a newer release (%s); this binary works with them.\n",
			strings.Join(st.Unknown, ", "))
	}
	return nil
}

// Version prints the last applied migration (the schema revision), then
// any pending or newer ones.
func (s *Syncer) Version(ctx context.Context) error {
	d, m, err := s.open(ctx)
	if err != nil {
		return err
	}
	defer d.Close()
	st, err := m.Status(ctx)
	if err != nil {
		return err
	}
	cur := st.Current()
	if cur == "" {
		cur = "None"
	}
	s.printf("%s\n", cur)
	if len(st.Pending) > 0 {
		s.printf("pending: %s (run `rivet dbsync upgrade`)\n", strings.Join(st.Pending, ", "))
	}
	if len(st.Unknown) > 0 {
		s.printf("newer release's: %s\n", strings.Join(st.Unknown, ", "))
	}
	return nil
}

// Unlock removes the migration lock a crashed run left behind.
func (s *Syncer) Unlock(ctx context.Context) error {
	d, m, err := s.open(ctx)
	if err != nil {
		return err
	}
	defer d.Close()
	held, since, err := m.Unlock(ctx)
	if err != nil {
		return err
	}
	if held {
		s.printf("Released the migration lock held since %s.\n", since.Format(time.RFC3339))
	} else {
		s.printf("The migration lock was not held.\n")
	}
	return nil
}
