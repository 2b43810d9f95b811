package db

import (
	"context"
	"time"

	"github.com/rivetmetal/rivet/core/clock"
)

// Now returns the database's clock in UTC, truncated to microseconds (the
// precision every dialect stores). Leases and heartbeats are compared against
// it so that hosts with skewed clocks agree on expiry and liveness. SQLite is
// embedded, hence single-host, and uses the process clock.
func (d *DB) Now(ctx context.Context) (time.Time, error) {
	var query string
	switch d.dialect {
	case Postgres:
		query = "SELECT clock_timestamp()"
	case MySQL:
		query = "SELECT UTC_TIMESTAMP(6)"
	default:
		return clock.Now(), nil
	}
	var t time.Time
	if err := d.bun.QueryRowContext(ctx, query).Scan(&t); err != nil {
		return time.Time{}, d.wrap(err, "read the database clock")
	}
	return t.UTC().Truncate(time.Microsecond), nil
}
