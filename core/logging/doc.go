// Package logging builds Rivet's process logger.
//
// Rules: services log through a *slog.Logger that is injected and scoped
// (With("node", id)), never a global. The level lives in a *slog.LevelVar so
// a SIGHUP reload of [DEFAULT] log_level changes it without a restart.
// Secrets never reach a log: callers log no secret on purpose, and the
// handler masks what slips through (plugins/redact: secret-named
// attributes, URL credentials and secret key=value pairs in any text).
package logging
