// Package acme is the complete example driver of docs/driver-author-guide.md:
// a third-party driver for the (fictional) Acme BMC, whose HTTP API has
// GET/PUT /power ({"state":"on"|"off"}) and POST /reset. It shows
// driver_info validation, error kinds (ErrInvalidDriverInfo,
// ErrBMCUnreachable) and testing with plugintest. It is compiled and tested
// with the SDK so the guide cannot rot.
//
// Rules: it imports only the SDK (plugins/...) and the standard library,
// as any third-party driver can.
package acme
