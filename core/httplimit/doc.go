// Package httplimit holds the limits Rivet's HTTP servers (the REST API
// and the conductors' JSON-RPC) put on what a client may hold open: a
// deadline for receiving a request body and a cap on open connections.
//
// Rules: a limit bounds what one connection can cost the server in time
// or memory without bounding what a legitimate client may do at a
// reasonable pace; every limit is an option with a default, 0 meaning
// none; nothing here reads a body or a header value.
package httplimit
