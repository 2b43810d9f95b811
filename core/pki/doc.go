// Package pki makes a deployment's own certificate authority and the
// certificates it signs, for JSON-RPC's mutual TLS between API services and
// conductors (`rivet tls init`, `rivet tls issue`).
//
// Rules: keys are ECDSA P-256, written as PKCS #8 PEM; every issued
// certificate is valid for both server and client authentication, so one
// certificate per host serves its conductor and authenticates its API; the
// CA can sign nothing but leaf certificates (path length 0). Nothing here
// touches files: callers decide where PEM bytes go and with what mode.
package pki
