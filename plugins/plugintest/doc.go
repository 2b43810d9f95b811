// Package plugintest is the conformance suite every Rivet driver runs, at
// three levels: Direct (the Go value itself), InProcess (through the gRPC
// service and go-plugin's in-memory connection, no subprocess) and
// Subprocess (the real plugin binary started by plugins/host). The same
// checks run at every level, so a difference between levels is a bug in the
// SDK or the driver's wire assumptions.
//
// Rules: the suite checks behaviour the SDK documents (power round trips,
// boot device round trips, idempotent tear down, advertised capabilities
// work and unadvertised ones answer ErrNotSupported, inventory shape, no
// secret in any error); it never asserts timing. Run runs every part;
// Cases lists them for a test that runs the suite against several BMC
// peers and replaces a part one peer cannot pass by its own check.
package plugintest
