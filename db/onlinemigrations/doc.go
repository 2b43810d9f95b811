// Package onlinemigrations holds the registry of online data migrations and
// runs them the way `ironic-dbsync online_data_migrations` does (reference
// ironic.md §6.3), with two additions: a progress bar on a terminal, and a
// service-version gate.
//
// An online data migration moves data while every service keeps running:
// backfilling a new column, moving values between columns, bumping the
// version column of rows to the latest object versions. Rules:
//   - A migration migrates at most maxCount objects per call (0 = all),
//     commits what it did, and returns (total needing migration when the
//     call started, migrated by this call). (0, 0) means nothing left.
//     It must be safe to interrupt and re-run at any point.
//   - A migration declares MinServiceVersion: the service version every
//     service must have reached before it may run, typically the version
//     of the release that writes the new form. Until every known service
//     (live, unknown or stopped; not forgotten) runs it and none is pinned
//     below it, the run is refused (exit 2) naming those services; then
//     the finalized release is raised to it before anything is written
//     (see Gate).
//   - Registration is explicit: cmd builds a Registry and each layer that
//     owns migrations installs its own (never init()). Order matters; the
//     version-bumping migration goes last.
//   - A migration is removed in the next named release after the one that
//     added it (seeds/000 "Online data migrations").
//
// To add one: write a Func (UpdateInBatches covers backfills and value
// moves), bump HEAD's ServiceVersion in core/release, register the
// migration in its layer's Install with MinServiceVersion set to that new
// service version, and test it on every dialect, including a --max-count
// smaller than the work so the re-run path is exercised.
package onlinemigrations
