package config

import "time"

// DatabaseOpts holds the [database] section. Each field is declared, with its
// default, rules and help, in databaseSection.
type DatabaseOpts struct {
	Connection            string
	MaxOpenConnections    int
	MaxIdleConnections    int
	ConnectionMaxLifetime time.Duration
	ConnectTimeout        time.Duration
	SQLiteBusyTimeout     time.Duration
}

func databaseSection() section {
	return section{name: "database", help: "Options of the database every service shares.", options: []*Option{
		strOpt("connection", "sqlite:////var/lib/rivet/rivet.db", func(c *Config) *string { return &c.Database.Connection },
			"Database connection URL: sqlite:////absolute/path.db, "+
				"postgresql://user:password@host:5432/rivet or mysql://user:password@host:3306/rivet. "+
				"The password is masked wherever the URL is shown. A PostgreSQL URL takes libpq's parameters "+
				"(sslmode, sslrootcert, host=/socket/dir, ...) and pgx's: by default a query is prepared "+
				"the second time its text is seen, keeping statement_cache_capacity (32) per connection; "+
				"default_query_exec_mode=exec prepares nothing, cache_statement everything.").
			required().masked(maskURL).check(checkConnection),
		intOpt("max_open_connections", 20, func(c *Config) *int { return &c.Database.MaxOpenConnections },
			"Largest number of open connections to the database per service.").atLeast(1),
		intOpt("max_idle_connections", 20, func(c *Config) *int { return &c.Database.MaxIdleConnections },
			"Largest number of idle connections kept open per service, at most max_open_connections "+
				"(a larger value is capped at it). Below the number of queries a busy service runs at "+
				"once, connections are closed and reopened continually.").atLeast(0),
		durOpt("connection_max_lifetime", 3600*time.Second, func(c *Config) *time.Duration { return &c.Database.ConnectionMaxLifetime },
			"Time after which a connection is closed and replaced. 0 keeps connections forever."),
		durOpt("connect_timeout", 10*time.Second, func(c *Config) *time.Duration { return &c.Database.ConnectTimeout },
			"Time allowed to establish a database connection.").atLeast(int64(time.Second)),
		durOpt("sqlite_busy_timeout", 5*time.Second, func(c *Config) *time.Duration { return &c.Database.SQLiteBusyTimeout },
			"With SQLite, how long a statement waits for a lock held by another connection "+
				"before failing."),
	}}
}
