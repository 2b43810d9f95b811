// Package rpc is the versioned conductor RPC API between rivet api and rivet
// conductor, independent of how calls travel: the method table, a client
// capped at the pinned release's RPC version, a server dispatcher that
// checks versions, typed errors that cross the wire, the object codec at
// the RPC boundary, the Transport interface with its in-process
// implementation (LocalTransport, all-in-one) and routing of a node to its
// conductor over the hash ring. The JSON-RPC 2.0 over HTTP(S) transport is
// core/rpc/jsonrpc, which imports this package (never the reverse).
//
// Rules (seeds/000_… "Ironic RPC versions", ARCHITECTURE §3.6):
//   - Every method and every optional argument records the RPC version that
//     introduced it. Within a major, new arguments are optional.
//   - The client sends the highest version its cap allows: arguments newer
//     than the cap are omitted (or refused, when the method says so), and a
//     method newer than the cap fails with *CapError before anything is sent.
//   - The server serves every older minor of its major and rejects a newer
//     minor or another major with *UnsupportedVersionError. It also rejects
//     arguments the request's version does not have.
//   - Errors cross the wire as class + HTTP code + message (ErrorToWire,
//     ErrorFromWire), so a NodeLocked raised by a conductor is a NodeLocked
//     in the API, whatever the transport.
//   - VersionParam and ContextParam are reserved: no method argument takes
//     either name (NewMethods), since a transport on Ironic's wire carries
//     the request's version and request id under them.
package rpc
