package dbsync

import (
	"context"
	"strings"

	"github.com/rivetmetal/rivet/db/onlinemigrations"
)

// OnlineDataMigrations runs the registered online data migrations, as
// `ironic-dbsync online_data_migrations`: maxCount nil runs passes of
// onlinemigrations.BatchSize until done (ironic-dbsync's are 50); otherwise one pass of at most *maxCount objects, which must be
// positive. options are --option values "<migration>.<key>=<value>".
// It returns ErrIncomplete when the budget ran out (re-run), an error
// wrapping ErrBadArguments for bad arguments (checked before the database
// is touched) and one wrapping ErrRefused when the database or the fleet is
// not ready (onlinemigrations.Gate: a service too old or pinned below a
// migration). Before migrating it raises the finalized release to what the
// migrations write, when it is below, and says so on Out.
func (s *Syncer) OnlineDataMigrations(ctx context.Context, maxCount *int, options []string) error {
	if maxCount != nil && *maxCount < 1 {
		return &onlinemigrations.ArgumentError{Msg: `"max-count" must be a positive value.`}
	}
	reg := s.Registry
	if reg == nil {
		reg = &onlinemigrations.Registry{}
	}
	opts, err := onlinemigrations.ParseOptions(options, reg)
	if err != nil {
		return err
	}
	d, m, err := s.open(ctx)
	if err != nil {
		return err
	}
	defer d.Close()
	st, err := m.Status(ctx)
	if err != nil {
		return err
	}
	switch {
	case len(st.Applied)+len(st.Unknown) == 0:
		return refusal("the database has no schema: run `rivet dbsync upgrade` first")
	case len(st.Pending) > 0:
		return refusal("the database schema is not up to date (pending: %s): run `rivet dbsync upgrade` first",
			strings.Join(st.Pending, ", "))
	}
	if err := CheckObjectVersions(ctx, d, s.release(), false); err != nil {
		return err
	}
	report := s.Report
	if report == nil {
		report = onlinemigrations.LineReporter{W: s.Out}
	}
	runner := &onlinemigrations.Runner{DB: d, Registry: reg, Report: report, ServiceTimeout: s.ServiceTimeout, BatchSize: s.BatchSize,
		ForgetTimeout: s.ForgetTimeout, Table: s.release(), Notes: s.Out}
	budget := 0
	if maxCount != nil {
		budget = *maxCount
	}
	finished, err := runner.Run(ctx, budget, opts)
	if err != nil {
		return err
	}
	if !finished {
		s.printf("%s\n", ErrIncomplete)
		return ErrIncomplete
	}
	s.printf("Data migrations have completed.\n")
	return nil
}
