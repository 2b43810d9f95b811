// Package ipmi is the "ipmi" hardware type: power, management (boot device,
// NMI) and a network-boot ramdisk deploy over IPMI 2.0 (RMCP+, lanplus),
// built on github.com/bougou/go-ipmi. It runs out of process like every
// driver (rivet-driver-ipmi, or `rivet plugin serve ipmi`).
//
// driver_info keys are Ironic's: ipmi_address (required), ipmi_port (623),
// ipmi_username, ipmi_password (secret), ipmi_cipher_suite (3), ipmi_priv_level (the session privilege
// requested: ADMINISTRATOR by default, OPERATOR, USER or CALLBACK). A plugin
// cannot read the conductor's configuration: `rivet plugin serve ipmi`
// builds Options from the conductor's [ipmi] section, which the conductor
// passes as RIVET_IPMI_* variables. A node overrides them with
// ipmi_timeout (command_timeout, seconds), ipmi_retries (retries),
// ipmi_min_command_interval (seconds) and ipmi_power_state_change_timeout
// (seconds).
//
// Power serves interface version 2 with soft_power: every action waits for
// its final state within the caller's timeout (else
// ipmi_power_state_change_timeout); a soft power off is Chassis Control
// soft shutdown (ACPI), and a soft reboot a soft power off followed by power
// on, each within the timeout, as Ironic's ipmitool driver does. A hard
// power-off is never sent in place of a soft one.
//
// The deploy interface boots the node from the network: the conductor
// serves the node's iPXE script ([conductor] boot_http_address,
// core/conductor/bootserver), which points at the images named by
// instance_info (kernel + ramdisk, or boot_iso) on an HTTP server of the
// operator's; this driver only checks those keys, sets a one-time PXE boot
// and power-cycles the node.
//
// Rules (BMC etiquette):
//   - One RMCP+ session per BMC (address:port), reused across calls, at most
//     one command in flight per BMC, and at least MinCommandInterval between
//     two commands to it. A session idle for SessionIdleTimeout is closed.
//   - A session that stops answering is reopened and the command retried
//     once; every attempt has an explicit timeout and retry count.
//   - Close ends every session (and go-ipmi's keepalive goroutines).
//   - A panic inside go-ipmi while it reads an answer (it slices some
//     datagrams unchecked) is ErrMalformedAnswer and the session is dropped,
//     never a plugin crash. go-ipmi's own keepalive goroutine, which reads
//     answers too, is out of reach of that guard.
//   - Errors read "ipmi <address>:<port>: <operation>: …"; rejected
//     credentials are ErrInvalidDriverInfo naming the keys, silence is
//     retryable ErrBMCUnreachable. The password never reaches an error or a
//     log line.
package ipmi
