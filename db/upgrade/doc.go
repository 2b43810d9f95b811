// Package upgrade reports where a rolling upgrade stands, for
// `rivet upgrade status` and `rivet upgrade check` (Ironic's
// ironic-status upgrade check, taken further with service versions).
//
// Rules: it only reads. Status gathers facts (services and their releases,
// pins and liveness; the release `auto` resolves to; schema migrations;
// object versions in the database; pending online migrations). Check turns
// them into Success, Warning or Failure results whose details tell the
// operator what to do next; the command's exit code is the worst result
// (0, 1, 2).
package upgrade
