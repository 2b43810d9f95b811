// Package redfish is the "redfish" hardware type: power, management (boot
// device, NMI), a virtual-media ramdisk deploy, out-of-band inspection,
// BIOS settings (the Bios resource, its @Redfish.Settings object and
// attribute registry; bios.go) and firmware (UpdateService SimpleUpdate
// and its Task, components as Ironic reads them; firmware.go) over DMTF
// Redfish, built on github.com/stmcginnis/gofish (v0.23, package
// schemas). It runs out of process like every driver (rivet-driver-redfish,
// or `rivet plugin serve redfish`).
//
// driver_info keys are Ironic's: redfish_address (required; [http(s)://]host[:port],
// https when the scheme is left out, as in Ironic),
// redfish_system_id (the System's @odata.id or its bare id; optional when the
// BMC has exactly one system), redfish_username, redfish_password (secret),
// redfish_verify_ca (bool, boolean string, or a CA bundle path) and
// redfish_auth_type (auto, session or basic). Rivet adds
// redfish_virtual_media_location (auto, system or manager) and
// redfish_power_state_change_timeout (seconds), the wait for a power state
// unless the action carries its own timeout (power interface version 2; soft
// power is GracefulShutdown and GracefulRestart, polled until the system
// reads Off or On). A plugin cannot read the conductor's configuration:
// `rivet plugin serve redfish` builds Options from the conductor's
// [redfish] section, which the conductor passes as RIVET_REDFISH_*
// variables; a node overrides verify_ca_default, use_sessions (auto vs
// basic) and power_state_change_timeout with the keys above. The ramdisk
// deploy boots instance_info boot_iso, Ironic's ramdisk-deploy key.
//
// Rules (BMC etiquette):
//   - One gofish client per BMC (address + user + TLS and auth settings),
//     kept for the life of the process and shared by every node behind that
//     BMC: one session, reused; at most SessionBudgetPerBMC requests in flight
//     to it; kept-alive connections; every request bounded by
//     ConnectionTimeout and by the caller's ctx. BMC answers are untrusted:
//     none larger than 8 MiB is read, and a successful GET that is not one
//     JSON object is an error before gofish parses it (gofish would
//     dereference the nil a "null" decodes to, in goroutines no recover
//     reaches; FuzzRedfishResponses found it).
//   - A 401 on a session drops it and logs in once more (gofish never does);
//     a changed password replaces the session. A login refused for lack of
//     sessions falls back to basic auth (auto; it stays on basic for that
//     BMC until its client is next rebuilt, after the idle timeout or
//     Close) or waits with backoff within the
//     caller's deadline (session). A session idle for SessionIdleTimeout is
//     logged out; Close, and SIGTERM through LogoutOnSignal, log every
//     session out (plugins.Serve has no shutdown hook).
//   - A circuit breaker per BMC and system: BreakerThreshold consecutive
//     failures (no answer, 5xx) make calls fail fast with a retryable
//     ErrBMCUnreachable for a cooldown, then one probe decides.
//   - Never guess: optional ResetTypes (GracefulShutdown, GracefulRestart,
//     Nmi) and boot targets are used only when the system advertises them; a
//     Boot PATCH carries only the fields meant, with a fresh ETag; a 412 is
//     answered by reading again, once.
//   - Vendor differences are data (profile.go), chosen by the service root's
//     Vendor and overridable per node: where virtual media lives, which slot
//     (by media type, never by position), action or PATCH.
//   - Errors are *Error: driver, node, BMC address and operation, the HTTP
//     status and MessageId when the BMC answered; their text is scrubbed of
//     every driver_info secret and never wraps the raw cause. Logs carry no
//     secret either.
package redfish
