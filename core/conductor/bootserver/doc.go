// Package bootserver serves per-node iPXE scripts over HTTP for the
// network-boot ramdisk deploy (the ipmi hardware type sets a one-time PXE
// boot and power-cycles; iPXE then chain-loads GET /ipxe/{ident}, ident
// being the node's UUID or one of its ports' MAC addresses).
//
// A node in deploying, wait call-back or active gets a script that boots
// the image its instance_info names (kernel + ramdisk, or boot_iso); any
// other node gets a script that exits to the next boot device (its local
// disk), as Ironic does for nodes it is not deploying. An unknown ident is
// a plain-text 404.
//
// Rules:
//   - Read-only: nodes come through Source; the server never takes a lease
//     and never writes, so any conductor may answer for any node.
//   - Nothing reaches a script but constants, the kernel, ramdisk and ISO
//     URLs (http or https, userinfo removed) and kernel_append_params, each
//     checked against a character allowlist that leaves iPXE nothing to
//     interpret: no control characters, $ (settings expansion), # or quotes
//     anywhere; no whitespace in a URL, so it stays one argument; no | & ;
//     in the parameters, so they cannot chain a command. What fails the
//     check is never rendered: the node gets a refusal script (echo, exit
//     1) and the log names the node, the key and why, never the value.
//   - instance_info keys are drivers/ipmi's (kernel, ramdisk, boot_iso,
//     boot_mode) plus Ironic's kernel_append_params; core cannot import
//     drivers, so they are repeated here.
package bootserver
