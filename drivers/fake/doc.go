// Package fake is the fake-hardware driver: instant power, boot and deploy
// actions on in-memory per-node state, with no BMC behind it. Tests and
// benchmarks use it to exercise the conductor and the plugin path without
// hardware; it is served like any driver (rivet-driver-fake, or the rivet
// binary's hidden `plugin serve fake` mode).
//
// Rules: every operation succeeds instantly (Deploy waits driver_info
// fake_deploy_delay seconds when set; reading the power state waits
// fake_power_delay seconds, a BMC's latency, which power-state sync
// benchmarks use; a soft power off or soft reboot waits
// fake_soft_power_delay seconds, the simulated OS's reaction time, and fails
// when its timeout is shorter) and is remembered per node UUID for the life
// of the process; a node never seen before is powered off with a one-time
// PXE boot override. It needs no driver_info. It serves power interface
// version 2 with soft_power.
package fake
