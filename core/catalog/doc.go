// Package catalog is the hardware interface catalog: for each hardware type,
// the implementations of each hardware interface (boot, console, deploy,
// inspect, management, network, power, raid, vendor) that are enabled, and
// the default one (Ironic's driver composition, API 1.30 and 1.31).
//
// One catalog type serves every reader:
//   - a conductor builds its own from the plugins it negotiated and its
//     built-in implementations (ForConductor), registers it as its
//     conductor_hardware_interfaces rows, and checks nodes against it
//     (Check: Ironic's check_and_update_node_interfaces);
//   - the REST API merges the rows of the live conductors (FromRows, behind a
//     Cache) for GET /v1/drivers at 1.30;
//   - the backfill_node_interfaces online migration merges built-in
//     knowledge of Rivet's hardware types (Known) with the registered rows.
//
// Rules:
//   - A plugin serves at most one implementation of each interface for a
//     hardware type; the conductor adds its own: network "noop", console
//     "no-console", raid "no-raid", vendor "no-vendor", inspect
//     "no-inspect", and the boot implementation its deploy uses.
//   - Implementation names are Ironic's where Ironic has one ("ipmitool",
//     "redfish", "redfish-virtual-media", "ipxe", "ramdisk", "fake").
//   - Pure data: the package does no I/O itself (a Cache calls the Load
//     its owner gives it); a Catalog is safe for concurrent reads once
//     built.
package catalog
