package migrations

import (
	"context"
	"fmt"
)

// Status is where a database's schema stands relative to this binary.
type Status struct {
	// Applied lists the applied migrations this binary knows, oldest first.
	Applied []string
	// Pending lists the migrations this binary would apply, oldest first.
	Pending []string
	// Unknown lists migrations applied by a newer release (IDs only). An
	// older binary may run against a newer schema during a rolling upgrade
	// or a rollback, since every change is additive.
	Unknown []string
}

// Current returns the last applied migration this binary knows, or "" for
// an empty database.
func (s Status) Current() string {
	if len(s.Applied) == 0 {
		return ""
	}
	return s.Applied[len(s.Applied)-1]
}

// Status reads which migrations are applied. It creates nothing: an empty
// database reports every migration as pending.
func (m *Migrator) Status(ctx context.Context) (Status, error) {
	var st Status
	has, err := m.db.HasTable(ctx, TableMigrations)
	if err != nil {
		return st, err
	}
	if !has {
		for _, mg := range m.set.Sorted() {
			st.Pending = append(st.Pending, mg.String())
		}
		return st, nil
	}
	all, err := m.m.MigrationsWithStatus(ctx)
	if err != nil {
		return st, fmt.Errorf("migrations: read %s: %w", TableMigrations, err)
	}
	for _, mg := range all {
		if mg.IsApplied() {
			st.Applied = append(st.Applied, mg.String())
		} else {
			st.Pending = append(st.Pending, mg.String())
		}
	}
	missing, err := m.m.MissingMigrations(ctx)
	if err != nil {
		return st, fmt.Errorf("migrations: read %s: %w", TableMigrations, err)
	}
	for _, mg := range missing {
		st.Unknown = append(st.Unknown, mg.Name)
	}
	return st, nil
}
