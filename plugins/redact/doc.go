// Package redact is Rivet's one masking function: what the API shows, the
// conductor writes into last_error and every log line records instead of a
// secret. Masking happens where data leaves (a view, an error text, a log
// record), never where it is stored: drivers need the real values.
//
// Rules:
//   - A value under a key that names a secret (package secretkey) is
//     replaced whole by Masked, at any depth of a JSON document.
//   - In any string (a value, an error text, a log message) the userinfo of
//     every URL becomes "***:***" (or "***" when it holds no ':'), and the
//     value of every secret-named key=value pair, quoted "key": "value"
//     pair and query parameter becomes Hidden.
//   - When a text is ambiguous it hides more, never less.
//
// It lives in the SDK, which imports nothing from Rivet's core, so that the
// API, the conductor, the process logger and the plugins all share it; it
// imports only the standard library and secretkey.
package redact
