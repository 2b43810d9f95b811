package db

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// connection is a parsed [database] connection URL. Only the dialect-specific
// openers look at the fields; messages use masked.
type connection struct {
	dialect  Dialect
	url      *url.URL // scheme normalised ("+driver" stripped); nil for SQLite
	path     string   // SQLite file path; "" with memory
	memory   bool     // SQLite in-memory database
	masked   string   // the raw string with its password replaced, for messages
	password string   // scrubbed from any driver error, just in case
}

// maskedPassword replaces a password in messages, as Ironic masks secrets.
const maskedPassword = "***"

// MaskConnection returns raw with its password — in the user info or a
// password= query parameter — replaced by "***", so a connection URL can
// appear in logs and errors. It works on malformed URLs too, which is when
// it matters most.
func MaskConnection(raw string) string {
	masked, _ := maskConnection(raw)
	return masked
}

// maskConnection returns the masked URL and the password it removed. The
// user info is everything between "://" and the last "@" before any query,
// so a password holding an unescaped "/" or "@" is masked whole.
func maskConnection(raw string) (masked, password string) {
	_, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return raw, ""
	}
	prefixLen := len(raw) - len(rest)
	authority := rest
	if q := strings.IndexAny(authority, "?#"); q >= 0 {
		authority = authority[:q]
	}
	masked = raw
	if at := strings.LastIndex(authority, "@"); at >= 0 {
		if user, pass, hasPass := strings.Cut(authority[:at], ":"); hasPass && pass != "" {
			password = unescape(pass, url.PathUnescape)
			masked = raw[:prefixLen] + user + ":" + maskedPassword + raw[prefixLen+at:]
		}
	}
	return maskQueryPassword(masked, password)
}

// maskQueryPassword masks a password=… query parameter (libpq accepts one).
func maskQueryPassword(s, password string) (string, string) {
	base, query, ok := strings.Cut(s, "?")
	if !ok {
		return s, password
	}
	params := strings.Split(query, "&")
	for i, p := range params {
		k, v, ok := strings.Cut(p, "=")
		if ok && v != "" && strings.EqualFold(k, "password") {
			params[i] = k + "=" + maskedPassword
			if password == "" {
				password = unescape(v, url.QueryUnescape)
			}
		}
	}
	return base + "?" + strings.Join(params, "&"), password
}

func unescape(s string, fn func(string) (string, error)) string {
	if u, err := fn(s); err == nil {
		return u
	}
	return s
}

// schemes maps every accepted URL scheme (after "+driver" is stripped) to its
// dialect. SQLAlchemy spellings are accepted so an Ironic config works as-is.
var schemes = map[string]Dialect{
	"sqlite":     SQLite,
	"postgresql": Postgres,
	"postgres":   Postgres,
	"mysql":      MySQL,
}

// parseConnection parses a [database] connection URL. Errors never hold the
// password.
func parseConnection(raw string) (connection, error) {
	masked, password := maskConnection(raw)
	c := connection{masked: masked, password: password}
	if strings.TrimSpace(raw) == "" {
		return c, errors.New("database: no connection URL is configured: set [database] connection, e.g. sqlite:////var/lib/rivet/rivet.db")
	}
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return c, fmt.Errorf("database %s: not a URL (want dialect://…, e.g. sqlite:////var/lib/rivet/rivet.db or postgresql://user:pass@host/rivet)", masked)
	}
	dialectName, _, _ := strings.Cut(strings.ToLower(scheme), "+")
	d, ok := schemes[dialectName]
	if !ok {
		return c, fmt.Errorf("database %s: unknown dialect %q: use sqlite://, postgresql:// or mysql://", masked, scheme)
	}
	c.dialect = d
	if d == SQLite {
		return parseSQLite(c, rest)
	}
	u, err := url.Parse(dialectName + "://" + rest)
	if err != nil {
		// url.Error repeats the whole URL, password included; keep only
		// the reason.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return c, fmt.Errorf("database %s: malformed URL: %s", masked, scrub(err.Error(), password))
	}
	c.url = u
	return c, nil
}

// parseSQLite follows SQLAlchemy: sqlite:// and sqlite:///:memory: are
// in-memory, sqlite:///rel/path.db is relative to the working directory and
// sqlite:////abs/path.db is absolute.
func parseSQLite(c connection, rest string) (connection, error) {
	if q := strings.IndexAny(rest, "?#"); q >= 0 {
		return c, fmt.Errorf("database %s: SQLite URLs take no query parameters (Rivet sets WAL, busy_timeout and foreign_keys itself)", c.masked)
	}
	if rest == "" || rest == "/:memory:" {
		c.memory = true
		return c, nil
	}
	host, path, _ := strings.Cut(rest, "/")
	if host != "" {
		return c, fmt.Errorf("database %s: SQLite URLs have no host: use sqlite:///relative/path.db or sqlite:////absolute/path.db", c.masked)
	}
	if path == "" {
		return c, fmt.Errorf("database %s: no database file: use sqlite:///relative/path.db or sqlite:////absolute/path.db", c.masked)
	}
	c.path = path
	return c, nil
}

// minScrubLen is the shortest password scrub looks for: the drivers never
// print passwords, and masking every "a" of a message would make it
// unreadable for no gain.
const minScrubLen = 4

// scrub removes password from s; driver messages are not trusted to.
func scrub(s, password string) string {
	if len(password) < minScrubLen {
		return s
	}
	s = strings.ReplaceAll(s, password, maskedPassword)
	if esc := url.PathEscape(password); esc != password {
		s = strings.ReplaceAll(s, esc, maskedPassword)
	}
	return s
}
