// Package migrations holds Rivet's schema migrations and applies them with
// bun/migrate.
//
// Rules (seeds/000 "Policy for changes to the DB model", ARCHITECTURE §3.9):
//   - Migrations are SQL files, one per dialect, under sql/<dialect>/ with
//     the same name in every dialect directory: <14-digit UTC timestamp>_<what>
//     then .tx.up.sql (one transaction; PostgreSQL and SQLite) or .up.sql
//     (MySQL, whose DDL auto-commits: write its statements so that running
//     the file again after a failure part-way finishes the job). Statements
//     are separated by a line "--bun:split". There are no down migrations:
//     a release never undoes a schema change, it rolls forward.
//   - Changes are additive only. CheckPolicy rejects DROP TABLE/COLUMN,
//     RENAME, column type changes (ALTER … TYPE, MODIFY, CHANGE) and ADD
//     COLUMN … NOT NULL without DEFAULT. A drop is allowed only after its
//     deprecation period plus one release, and only when the file carries
//     "-- rivet:allow-drop deprecated-in=<release> reason=<why>" AND
//     AllowedDrops lists the same migration and release.
//   - Applying takes the migration lock (a row in bun_migration_locks) and
//     marks each migration applied only after it succeeded. A crashed run
//     leaves the lock behind; Unlock (`rivet dbsync unlock`) removes it.
//
// To add a migration: write sql/{postgresql,mysql,sqlite}/<timestamp>_<what>
// files, run `go test ./db/...` (policy, per-dialect parity, models ↔ schema
// on all three databases), and mirror new columns in the db row models.
package migrations
