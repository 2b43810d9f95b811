// Package logging builds Rivet's process logger.
//
// Rules: services log through a *slog.Logger that is injected and scoped
// (With("node", id)), never a global. The level lives in a *slog.LevelVar so
// a SIGHUP reload of [DEFAULT] log_level changes it without a restart.
// Secrets never reach a log: callers mask them before logging.
package logging
