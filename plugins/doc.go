// Package plugins is Rivet's driver SDK: everything a hardware driver author
// imports to write a driver that runs out of process as a go-plugin plugin.
//
// A driver is a value implementing Driver plus whichever capability
// interfaces it supports (PowerStateGetter, PowerSetter, BootDeviceSetter,
// NMIInjector, Inspector, …). Its main is a few lines calling Serve. The
// conductor (package plugins/host) starts the binary, negotiates the protocol
// major (1, or 2 with power interface version 2: timeouts and soft power)
// and then, in band, a version per hardware interface, and calls it.
//
// Rules:
//   - This package imports nothing from Rivet's core, db or drivers; a test
//     enforces it. An author needs only plugins/... and go-plugin.
//   - Every call takes ctx first and the Node (identity plus driver_info).
//   - Only the author's API is exported. The conductor's side of the wire
//     (the gRPC client, PowerActor, the errors only the host raises) is in
//     plugins/host; what both ends share and no author names (the go-plugin
//     handshake, the error kinds on the wire) in plugins/internal/wire. A
//     test (TestAuthorAPIHasNoHostOnlyNames) keeps host-only names out.
//   - Errors carry their kind and retry-ability across the process boundary;
//     the mapping to gRPC status lives in status.go (toStatus) and back in
//     plugins/host's status.go (fromStatus), and nowhere else.
//     A Validator's verdict (ValidationProblem: unreachable, credentials
//     refused, wrong system id, invalid keys) is an answer, not a failed
//     call: it travels in the Validation service's response.
//   - Optional features are extra interfaces plus advertised capabilities;
//     the host never guesses.
//   - driver_info values whose key names a secret (password, secret, token,
//     …) are never logged or put into an error by the SDK; its logger also
//     masks URL credentials in any text (package redact).
//   - The generated protobuf code is private (plugins/internal/proto); authors
//     see only the hand-written types here.
package plugins
