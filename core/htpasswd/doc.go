// Package htpasswd checks HTTP basic credentials against an Apache htpasswd
// file with bcrypt hashes, the format Ironic's http_basic auth uses.
//
// Rules: only bcrypt entries ($2y$, $2a$, $2b$) are accepted; any other hash
// type is a load error naming the line, never a silent "no match". The file
// can be reloaded while serving; a failed reload keeps the previous users.
// Passwords never appear in errors or logs.
package htpasswd
