// Package client is a Go client for an Ironic v1 compatible REST API, such
// as Rivet's own: nodes, ports, portgroups, chassis and drivers, the node
// state endpoints, pagination and Ironic's error bodies.
//
// Rules:
//   - Microversions are negotiated exactly as seeds/002_… specifies. With no
//     version given, the client starts at MaxVersion (or at the version cached
//     for the endpoint) and, on a 406 carrying the server's range, downgrades
//     once to the highest version both sides speak, caches it, and retries
//     the same request (use case 7A). A version the caller gave, "latest"
//     included, is never changed: a 406 becomes a *VersionError naming both
//     ranges (5, 6, 7B), and so does a server without microversions (3B).
//     With no version given, such a server is spoken to at 1.1 (3A).
//   - Invalid versions ("spam", "1.2.3.4.5") are rejected by ParseRequest,
//     before any request is made (4).
//   - Resources are kept as Resource (map[string]any): the server hides or
//     adds fields by version, and nothing it sends is dropped.
//   - Every error from the server is an *APIError carrying the status, the
//     message (faultstring or description) and the request id; errors.Is
//     matches ErrNotFound and ErrConflict.
//   - ctx comes first on every call doing I/O; the credentials never reach a
//     log.
package client
