// Package db is Rivet's persistence layer: opening a database from a
// [database] connection string, the bun row models of every table, and the
// queries whose semantics matter across processes (node leases, the services
// registry).
//
// Rules:
//   - Three dialects, one behaviour: SQLite (modernc, pure Go), PostgreSQL
//     (pgx) and MySQL/MariaDB (go-sql-driver). Integration tests run every
//     query on all three.
//   - Schema lives in db/migrations as explicit SQL per dialect; the models
//     here mirror it column for column and never create tables.
//   - Every object table has a nullable version column holding the object
//     version the row was written at (ARCHITECTURE §3 rule 3). Rows are plain
//     data: conversion to and from core objects happens at this boundary, in
//     code that owns it, never through bun tags on core types.
//   - Conflict detection uses a conditional UPDATE checked by RowsAffected,
//     never RETURNING (MySQL silently ignores it). MySQL connections use
//     clientFoundRows so a matched-but-unchanged row still counts.
//   - Times are stored in UTC. Lease and heartbeat times come from Now, the
//     database clock (process clock for SQLite, which is single-host), so
//     hosts with skewed clocks still agree on expiry and liveness.
//   - Secret values of node driver_info (plugins/secretkey) are encrypted at
//     this boundary when the Store has a keyring (Store.WithKeyring): the row
//     holds keyring envelopes, objects hold plaintext. RotateCredentials
//     re-encrypts online with conditional updates.
//   - Errors name the actor and never contain a database password.
package db
