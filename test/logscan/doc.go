// Package logscan proves that BMC passwords never leave Rivet except
// towards their BMC: it runs full node lifecycles through the REST API,
// a conductor and real plugin processes (fake-hardware, and redfish against
// the drivers/redfish/sim BMC), captures every log line of every component
// and every HTTP response body, and fails if a password appears in any of
// them, in a node's last_error, or in the database. Credentials inside URLs
// (a BMC address, an image URL) and under secret-named extra keys are
// checked the same way, except in the database, which stores them as given.
//
// Rules: the passwords are distinctive strings that nothing else contains,
// so any occurrence is a leak; logs are captured at debug level through the
// services' own logger (core/logging), masking included.
package logscan
