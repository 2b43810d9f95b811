// Package config reads Rivet's oslo.config-style INI configuration.
//
// Every option is declared exactly once, in the opts_*.go file of its
// section: name, type, default, help, choices or bounds, whether a SIGHUP
// reload applies it, and whether its value is secret. That declaration drives
// parsing, environment variable names, validation, the sample file
// (configs/rivet.conf.sample) and the reference (docs/admin/configuration.md).
//
// Rules:
//   - Files are applied in order, later overriding earlier; then environment
//     variables RIVET_<SECTION>_<OPTION> override files. Environment variables
//     that name no option are ignored (other tools share the RIVET_ prefix);
//     an unknown section or option in a file is an error.
//   - Invalid values stop the service at start: Validate returns one error per
//     problem, naming "[section] option", the value and what is valid.
//   - What a server exposes is checked per service (ValidateService): a REST
//     API or a conductor JSON-RPC listener that would serve node data
//     without authentication off loopback stops that service at start,
//     naming the options that fix it; ServiceNotices are what it logs.
//   - Secret values never appear in an error, a log line or the sample; a
//     database connection URL is shown with its password masked.
//   - Only options declared reloadable change on SIGHUP (Reloader); a change to
//     any other option is logged as needing a restart.
//   - After changing a declaration, regenerate the sample and the reference
//     with `go test ./core/config -run TestGenerated -update`.
package config
