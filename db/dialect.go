package db

// Dialect names the SQL dialect of a database.
type Dialect string

// The dialects Rivet supports.
const (
	SQLite   Dialect = "sqlite"
	Postgres Dialect = "postgresql"
	MySQL    Dialect = "mysql"
)

// Dialects lists every supported dialect, for tables of tests and messages.
func Dialects() []Dialect { return []Dialect{SQLite, Postgres, MySQL} }

// String returns the dialect's name as used in connection URLs.
func (d Dialect) String() string { return string(d) }
