package onlinemigrations

import (
	"context"
	"fmt"
	"regexp"
	"slices"

	"github.com/rivetmetal/rivet/db"
)

// Func migrates up to maxCount objects (0 means all) and returns how many
// objects needed migrating when it started and how many it migrated. opts
// holds the --option values given for this migration (key → value).
type Func func(ctx context.Context, d *db.DB, maxCount int, opts map[string]string) (total, migrated int, err error)

// Migration is one registered online data migration.
type Migration struct {
	// Name identifies the migration in output ("<Name>() migrated …") and
	// in --option <Name>.<key>=<value>. A lower-case identifier.
	Name string
	// MinServiceVersion is the service version every live service must
	// run before this migration may start; 0 means no requirement.
	MinServiceVersion int
	// Options lists the --option keys the migration accepts; others are
	// refused as bad arguments.
	Options []string
	// Run does the work.
	Run Func
	// Pending, when set, counts the objects still needing the migration
	// without changing anything (for rivet upgrade status and check).
	Pending func(ctx context.Context, d *db.DB) (int, error)
}

// Registry is an ordered set of online data migrations. The zero value is
// empty and ready to use; it is not safe for concurrent registration.
type Registry struct {
	migrations []Migration
}

var nameRE = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// Register appends m, to run after the migrations already registered.
func (r *Registry) Register(m Migration) error {
	switch {
	case !nameRE.MatchString(m.Name):
		return fmt.Errorf("online migration %q: name must be a lower-case identifier", m.Name)
	case m.Run == nil:
		return fmt.Errorf("online migration %s: no Run function", m.Name)
	case m.MinServiceVersion < 0:
		return fmt.Errorf("online migration %s: negative MinServiceVersion", m.Name)
	}
	if _, dup := r.Lookup(m.Name); dup {
		return fmt.Errorf("online migration %s is registered twice", m.Name)
	}
	r.migrations = append(r.migrations, m)
	return nil
}

// Migrations returns the registered migrations in run order.
func (r *Registry) Migrations() []Migration { return slices.Clone(r.migrations) }

// Names returns the registered names in run order.
func (r *Registry) Names() []string {
	names := make([]string, len(r.migrations))
	for i, m := range r.migrations {
		names[i] = m.Name
	}
	return names
}

// Lookup finds a migration by name.
func (r *Registry) Lookup(name string) (Migration, bool) {
	i := slices.IndexFunc(r.migrations, func(m Migration) bool { return m.Name == name })
	if i < 0 {
		return Migration{}, false
	}
	return r.migrations[i], true
}
