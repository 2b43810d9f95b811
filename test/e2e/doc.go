// Package e2e runs Rivet the way its users do: the rivet binary in a
// separate process (rivet dev), driven with the rivet CLI, Debian's
// python3-ironicclient and the BMC simulators it talks to.
//
// Rules: the binary is built once per test run; every process a test
// starts is stopped by it and checked gone; only loopback addresses are
// used; services that are missing skip locally and fail under CI=true.
package e2e
