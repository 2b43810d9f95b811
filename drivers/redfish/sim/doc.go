// Package sim is an in-process Redfish BMC simulator: one HTTP handler serves
// N computer systems, each with its own Manager (BMC), Chassis, virtual media
// and inventory, the way a multi-node chassis manager does. cmd/rivet-sim wraps
// it in a binary; `rivet dev`, driver tests and benchmarks embed it (New,
// Handler or Serve, then System, SetPower and SetFault to look and meddle).
//
// Identifiers are predictable so tests and demo enrolment can name nodes
// without asking: system i is "node-i" (/redfish/v1/Systems/node-0), its chassis
// has the same id (/redfish/v1/Chassis/node-0) and its manager is "BMC-node-i"
// (/redfish/v1/Managers/BMC-node-0). Virtual media slots are "Cd" (CD, DVD) and
// "Floppy" (Floppy, USBStick), as sushy-tools names them, under the Manager
// and, with Options.SystemVirtualMedia, under the System too. UUIDs, MAC
// addresses and hardware sizes are derived from Options.Seed and the index,
// so the same seed always yields the same fleet.
//
// Rules:
//   - Resources are rendered on every request from a compact per-system state;
//     nothing is pre-rendered, so 10,000 systems cost about as much as their
//     state structs (about 130 bytes each).
//   - Every error answer is a Redfish error body
//     {"error":{"code":"Base.1.8.GeneralError","message":…,"@Message.ExtendedInfo":[…]}}
//     whose extended info carries the specific Base registry MessageId.
//   - The service root (/redfish and /redfish/v1/) and the session login POST
//     are the only resources reachable without credentials; everything else
//     needs HTTP basic auth or an X-Auth-Token from a session.
//   - Exceeding Options.SessionLimit answers 503 with SessionLimitExceeded and
//     a Retry-After header: the condition is transient (sessions expire or are
//     deleted) and a well-behaved client retries later rather than treating it
//     as a bad request.
//   - If-Match is honoured on PATCH and actions, before the body is judged:
//     absent, "*" or the current ETag passes, anything else is 412
//     PreconditionFailed. Systems and each virtual media slot have their own
//     ETag, so inserting media does not invalidate a System ETag a client holds.
//   - A power-on (Reset On, a restart, SetPower) ends in a boot when the
//     settle time has passed: the firmware takes the override target (a Once
//     override is used up), and booting Cd or Usb with media inserted at that
//     moment records the image in State.LastBootImage.
//   - The boot uses the override's BootSourceOverrideMode (State.LastBootMode),
//     and is secure (SecureBoot resource's SecureBootCurrentBoot, State's
//     SecureBootCurrentBoot) only when SecureBootEnable is set and the mode is
//     UEFI. SecureBootEnable is PATCHable at /Systems/{id}/SecureBoot with its
//     own ETag.
//   - The system and its chassis each have an indicator LED with state,
//     shown as IndicatorLED (Off, Lit, Blinking) and LocationIndicatorActive;
//     either property may be PATCHed (the Chassis has its own ETag).
//   - Each system has a Bios resource whose attributes follow an attribute
//     registry served from /redfish/v1/Registries; a PATCH of its
//     @Redfish.Settings object (/Systems/{id}/Bios/Settings) is checked
//     against the registry and comes into force at the next boot, as does
//     Bios.ResetBios (bios.go). The UpdateService's SimpleUpdate creates a
//     Task that completes after Options.UpdateDuration; the image's file name
//     carries the version it installs, a BMC image is in force at once and a
//     BIOS image at the next boot (update.go). An untouched system keeps
//     neither: its state grows only when they are used.
//   - Faults (latency, 500s, hangs) are drawn from a generator seeded by
//     Options.Seed, globally or per system at run time (SetFault). A hung request
//     answers only when its client gives up or the simulator stops; Close
//     releases every one of them, so no goroutine outlives the simulator.
//   - Request bodies are parsed strictly: unknown properties and parameters
//     are refused by name, so a driver bug shows here rather than on hardware.
//   - Storage/1 is a RAID controller over the system's drives: a volume is
//     created by POST to its Volumes collection ({"RAIDType", "CapacityBytes",
//     "Name", "Links": {"Drives"}}; 201 with a Location) and deleted by
//     DELETE, applied IMMEDIATELY (the collection advertises only the
//     "Immediate" OperationApplyTime; real BMCs may defer to the next reset).
//     A volume's drives are in use (409 for another volume), a RAID type
//     needs its drives, and its capacity is bounded by what they give.
//   - Credentials never reach a log.
package sim
