// Package dbtest gives tests a fresh database of each dialect: a file in a
// temporary directory for SQLite, a private database on the CI servers for
// PostgreSQL and MySQL (through test/testenv, so a missing server skips
// locally and fails under CI=true).
//
// Rules: test code only; every database is private to one test and dropped
// at cleanup, so tests and packages may run in parallel.
package dbtest
