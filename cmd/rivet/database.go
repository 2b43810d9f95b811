package main

import (
	"context"
	"fmt"

	"github.com/rivetmetal/rivet/core/config"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/migrations"
)

// dbOptions are the [database] pool and timeout settings of cfg.
func dbOptions(cfg *config.Config) db.Options {
	dbc := cfg.Database
	return db.Options{
		MaxOpenConnections:    dbc.MaxOpenConnections,
		MaxIdleConnections:    dbc.MaxIdleConnections,
		ConnectionMaxLifetime: dbc.ConnectionMaxLifetime,
		ConnectTimeout:        dbc.ConnectTimeout,
		SQLiteBusyTimeout:     dbc.SQLiteBusyTimeout,
	}
}

// schemaCurrent refuses a database whose schema lacks migrations this
// release needs: services start only after `rivet dbsync upgrade`.
func schemaCurrent(ctx context.Context, dbh *db.DB) error {
	m, err := migrations.NewMigrator(dbh)
	if err != nil {
		return err
	}
	st, err := m.Status(ctx)
	if err != nil {
		return err
	}
	if len(st.Pending) > 0 {
		return fmt.Errorf("database %s: schema is not up to date (%d migrations pending, first %s): run `rivet dbsync upgrade`",
			dbh, len(st.Pending), st.Pending[0])
	}
	return nil
}
