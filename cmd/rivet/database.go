package main

import (
	"github.com/rivetmetal/rivet/core/config"
	"github.com/rivetmetal/rivet/db"
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
