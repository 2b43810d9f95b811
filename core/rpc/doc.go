// Package rpc is the versioned conductor RPC API between rivet api and rivet
// conductor: the method table, a client capped at the pinned release's RPC
// version, a server dispatcher that checks versions, typed errors that cross
// the wire, transports (in-process and JSON-RPC 2.0 over HTTP(S)) and routing
// of a node to its conductor over the hash ring.
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
//   - Errors cross the wire as class + HTTP code + message, so a NodeLocked
//     raised by a conductor is a NodeLocked in the API.
//   - Over JSON-RPC a call that the transport resends (a kept-alive
//     connection closed before its answer) runs at most once on a
//     conductor that knows its call id (CallIDHeader, replayCache); the
//     header is additive, so old and new releases mix during an upgrade.
package rpc
