// Package upgrade is the rolling-upgrade proof (ARCHITECTURE §4, the step
// table of seeds/000_…): a real deployment on loopback is upgraded from the
// last cut release to the working tree, one process at a time, under
// continuous client load, and must lose nothing.
//
// The deployment: a private PostgreSQL or MariaDB database, two `rivet api`
// behind HAProxy (health-checked, drained on restart), two `rivet conductor`
// with JSON-RPC and out-of-process drivers (rivet-driver-* from the release
// being run), rivet-sim for the redfish nodes, Debian's ipmi_sim for a few
// ipmi nodes, fake-hardware for the rest. About a hundred nodes sit in mixed
// states while workers, each owning its own nodes, read, PATCH markers into
// extra, switch power, deploy and undeploy, and create and delete ports,
// retrying 409 NodeLocked and 503 a few times as python-ironicclient does.
// Anything else that fails is a failure.
//
// The runs:
//   - manual pinning on PostgreSQL: dbsync upgrade, conductors one at a
//     time (pinned to the old release), APIs one at a time, unpin with
//     SIGHUP (conductors, then APIs), online data migrations;
//   - automatic pinning (pin_release_version = auto) on MariaDB;
//   - rollback: one conductor and one API upgraded, then put back to the
//     old release under load; then the full upgrade, after which an old
//     service must refuse to start.
//
// Each run ends with: zero failed requests, every acknowledged write read
// back, no node left in a transient state or leased, every row at the new
// release's object versions, no process left behind. A table of requests,
// retries, errors and latencies per step is printed.
//
// The runs take minutes, so `go test ./...` skips them (the harness's own
// unit tests still run). Run them with
//
//	go test -count=1 -timeout 30m ./test/upgrade/ -args -upgrade
//
// (.ci/run runs it, with -v, after the README's test command). The old release is the
// newest cut release of core/release with a commit (built from git history
// by testenv.BuildRelease and cached); RIVET_UPGRADE_FROM=<commit> overrides
// it. The new release is the working tree.
package upgrade
