// Package testenv gates integration tests on the services they need.
//
// Each Require* helper returns what the test needs when the service is there.
// When it is not, the test is skipped with the reason locally and FAILS when
// CI=true, so an integration test can never pass in CI by silently not running.
// Database helpers give every test its own freshly created database, dropped
// at cleanup, so packages running in parallel never share state.
// StartPostgresServer is the exception for tests that must stop and start
// the database itself: a private server (initdb + pg_ctl) on a port of its
// own, never the shared one.
package testenv
