// Package conductor holds the conductor's fault tests with real processes:
// the rivet binary is built once, two `rivet conductor` processes share one
// PostgreSQL database on loopback ports, and the tests drive them over
// JSON-RPC (core/rpc client and router over the live conductors) while
// killing or stopping them. The exposure tests (exposure_test.go) add a
// `rivet api` in front and JSON-RPC http_basic, replay the API's own calls
// to a conductor's port without credentials, and check which
// configurations refuse to start.
//
// Rules: every test gets its own database (testenv.RequirePostgres: skipped
// locally without PostgreSQL, a failure under CI=true) and its own
// processes, killed at cleanup; timings are short (1 s heartbeats, 3 s
// timeout, 1 s takeover check) so the suite stays under a minute.
package conductor
