package upgrade

import (
	"context"
	"slices"
	"time"

	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/migrations"
	"github.com/rivetmetal/rivet/db/onlinemigrations"
)

// Service is a registered service with its liveness and what it speaks.
type Service struct {
	db.Service
	Live bool `json:"live"`
	// State is live, unknown (online but not heartbeating), stopped or
	// gone (db.ServiceState); all but gone count for the automatic pin,
	// the finalized release and the online migration gate.
	State db.ServiceState `json:"state"`
	// Counts is false for a service that no longer holds the upgrade back:
	// gone, or older than the finalized release (db.Service.Counts).
	Counts bool `json:"counts"`
	// Speaks is the release table entry the service's version maps to.
	Speaks string `json:"speaks"`
	// Uses is, for a live service, the release whose versions it uses now
	// as its services row tells (its pin, auto resolved, an API capped to
	// its live conductors: EffectiveOf); "" for a service not live.
	Uses string `json:"uses,omitempty"`
}

// ObjectCount is how many rows of a table carry one object version.
type ObjectCount struct {
	Table   string `json:"table"`
	Kind    string `json:"kind"`
	Version string `json:"version"`
	Rows    int    `json:"rows"`
}

// Migration is an online data migration and what is left for it.
type Migration struct {
	Name              string `json:"name"`
	MinServiceVersion int    `json:"min_service_version"`
	// Pending is the number of objects still to migrate; -1 when the
	// migration cannot count without running.
	Pending int `json:"pending"`
	// Release is the release whose services can read what it writes (the
	// entry of MinServiceVersion); empty when it needs none.
	Release string `json:"release,omitempty"`
	// BlockedBy lists the known services too old for it or pinned below
	// it: while there are any, `rivet dbsync online-data-migrations`
	// refuses to run it.
	BlockedBy []string `json:"blocked_by,omitempty"`
}

// Finalized is the finalized-release watermark (ARCHITECTURE §4).
type Finalized struct {
	Release        string    `json:"release"`
	ServiceVersion int       `json:"service_version"`
	UpdatedAt      time.Time `json:"updated_at"`
}

// readFinalized reads the watermark; nil when none, or when the schema
// predates it (upgrade check runs before dbsync upgrade).
func readFinalized(ctx context.Context, d *db.DB) (*Finalized, error) {
	if has, err := d.HasTable(ctx, db.TableFinalizedRelease); err != nil || !has {
		return nil, err
	}
	fr, err := d.FinalizedRelease(ctx)
	if err != nil || fr == nil {
		return nil, err
	}
	return &Finalized{Release: fr.Release, ServiceVersion: fr.ServiceVersion, UpdatedAt: fr.UpdatedAt}, nil
}

// Status is the state of the deployment as this binary sees it.
type Status struct {
	Release        string    `json:"release"`
	ServiceVersion int       `json:"service_version"`
	Services       []Service `json:"services"`
	AutoPin        string    `json:"auto_pin"`
	// Finalized is the finalized-release watermark; nil when none yet.
	Finalized  *Finalized        `json:"finalized_release"`
	Schema     migrations.Status `json:"schema"`
	Objects    []ObjectCount     `json:"objects"`
	Migrations []Migration       `json:"online_migrations"`
}

// Collect reads the status. lv classifies the services rows: live within
// [conductor] heartbeat_timeout, gone beyond [DEFAULT] service_forget_timeout.
func Collect(ctx context.Context, d *db.DB, table *release.Table, reg *onlinemigrations.Registry, lv db.Liveness) (*Status, error) {
	st := &Status{Release: release.Current, ServiceVersion: table.Head().ServiceVersion}
	m, err := migrations.NewMigrator(d)
	if err != nil {
		return nil, err
	}
	if st.Schema, err = m.Status(ctx); err != nil {
		return nil, err
	}
	if len(st.Schema.Applied) == 0 {
		return st, nil // empty database: nothing else to read
	}
	now, err := d.Now(ctx)
	if err != nil {
		return nil, err
	}
	svcs, err := d.Services(ctx)
	if err != nil {
		return nil, err
	}
	if st.Finalized, err = readFinalized(ctx, d); err != nil {
		return nil, err
	}
	fin := 0
	if st.Finalized != nil {
		fin = st.Finalized.ServiceVersion
	}
	collectServices(svcs, now, table, lv, fin, st)
	if st.Objects, err = countObjects(ctx, d); err != nil {
		return nil, err
	}
	// Before `rivet dbsync upgrade` (step 0, when the docs say to run
	// `rivet upgrade check`) this release's online migrations cannot count:
	// they read columns its pending schema migrations add. They show as
	// unknown, and the schema check says what to do.
	counts := len(st.Schema.Pending) == 0
	for _, mg := range reg.Migrations() {
		pm := Migration{Name: mg.Name, MinServiceVersion: mg.MinServiceVersion, Pending: -1}
		if e, ok := table.ForServiceVersion(mg.MinServiceVersion); ok && mg.MinServiceVersion > 0 {
			pm.Release = e.Release()
		}
		for _, b := range onlinemigrations.Blocking(svcs, now, lv, fin, table, mg.MinServiceVersion) {
			pm.BlockedBy = append(pm.BlockedBy, b.String())
		}
		if mg.Pending != nil && counts {
			if pm.Pending, err = mg.Pending(ctx, d); err != nil {
				return nil, err
			}
		}
		st.Migrations = append(st.Migrations, pm)
	}
	return st, nil
}

// collectServices classifies svcs at now; auto resolves over those that
// count (known, not below the finalized release fin), as a service's Guard
// does.
func collectServices(svcs []db.Service, now time.Time, table *release.Table, lv db.Liveness, fin int, st *Status) {
	var known []int
	for _, s := range svcs {
		state := s.State(now, lv)
		sv := Service{Service: s, Live: state == db.ServiceLive, State: state, Counts: s.Counts(now, lv, fin)}
		if e, ok := table.ForServiceVersion(s.ServiceVersion); ok {
			sv.Speaks = e.Label()
		}
		if sv.Counts {
			known = append(known, s.ServiceVersion)
		}
		st.Services = append(st.Services, sv)
	}
	st.AutoPin = table.Resolve(release.Pin{Mode: release.PinAuto}, known).Label()
	var liveRows []db.Service
	for _, s := range st.Services {
		if s.Live {
			liveRows = append(liveRows, s.Service)
		}
	}
	for i, s := range st.Services {
		if s.Live {
			st.Services[i].Uses = EffectiveOf(table, s.Service, liveRows).Label()
		}
	}
}

func countObjects(ctx context.Context, d *db.DB) ([]ObjectCount, error) {
	var out []ObjectCount
	tables := db.ObjectTables()
	present, err := d.Tables(ctx)
	if err != nil {
		return nil, err
	}
	for _, kind := range db.ObjectKinds() {
		if !slices.Contains(present, tables[kind]) {
			continue // a kind newer than the schema: `dbsync upgrade` creates its table
		}
		var rows []struct {
			Version *string `bun:"version"`
			N       int     `bun:"n"`
		}
		err := d.Bun().NewSelect().Table(tables[kind]).ColumnExpr("version").ColumnExpr("COUNT(*) AS n").
			GroupExpr("version").Scan(ctx, &rows)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			v := "NULL"
			if r.Version != nil {
				v = *r.Version
			}
			out = append(out, ObjectCount{Table: tables[kind], Kind: kind, Version: v, Rows: r.N})
		}
	}
	slices.SortFunc(out, func(a, b ObjectCount) int {
		if a.Table != b.Table {
			return compare(a.Table, b.Table)
		}
		return compare(a.Version, b.Version)
	})
	return out, nil
}

func compare(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
