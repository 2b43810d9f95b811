package sim

import (
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Allowable values, in the order the resources advertise them.
var (
	bootTargets  = []string{"None", "Pxe", "Cd", "Usb", "Hdd", "BiosSetup", "UefiHttp"}
	bootEnableds = []string{"Disabled", "Once", "Continuous"}
	bootModes    = []string{"UEFI", "Legacy"}
)

// Indexes into the tables above that the power logic needs by name.
const (
	targetNone uint8 = 0
	targetCd   uint8 = 2
	targetUsb  uint8 = 3
	targetHdd  uint8 = 4

	enabledDisabled   uint8 = 0
	enabledOnce       uint8 = 1
	enabledContinuous uint8 = 2
)

// Power states as Redfish spells them.
const (
	PowerOn          = "On"
	PowerOff         = "Off"
	PowerPoweringOn  = "PoweringOn"
	PowerPoweringOff = "PoweringOff"
)

// system is the whole mutable state of one simulated machine. It is kept
// small on purpose: everything else a resource shows is derived from the
// index and the seed when the resource is rendered.
type system struct {
	mu          sync.Mutex
	on          bool           // where power is, or is heading during a transition
	pendingBoot bool           // the transition in progress ends in a boot
	settleAt    int64          // UnixNano when the transition ends; 0 when settled
	delayed     []delayedReset // Resets held by Quirks.PowerDelay, oldest first
	boot        [3]uint8
	gen         uint32 // bumped on every visible change; the System ETag
	resets      uint32
	nmis        uint32
	boots       uint32
	lastBoot    uint8 // index into bootTargets, valid when boots > 0
	lastImage   string
	media       [len(mediaSlots)]slot
	storage     storageState // volumes (storage.go)
	// lastMode is the boot mode (index into bootModes) the last boot
	// used: the override's BootSourceOverrideMode (boot[2]).
	lastMode uint8
	// UEFI secure boot (secureboot.go): secureBoot is SecureBootEnable,
	// secureCurrent SecureBootCurrentBoot (set at boot), secureGen the
	// resource's ETag.
	secureBoot    bool
	secureCurrent bool
	secureGen     uint32
	// led is the system's indicator (index into ledStates); chassisLED
	// and chassisGen are its chassis's LED and ETag (indicators.go).
	led        uint8
	chassisLED uint8
	chassisGen uint32
	hw         *hwState // BIOS settings and firmware (bios.go); nil: untouched
	fault      atomic.Pointer[Fault]
	requests   atomic.Int64 // requests to its resources, faulted ones included
}

// delayedReset is a Reset accepted but not yet applied (Quirks.PowerDelay).
type delayedReset struct {
	at        int64 // UnixNano when it applies
	resetType string
}

// slot is one virtual media drive.
type slot struct {
	image          string
	inserted       bool
	writeProtected bool
	gen            uint32 // the slot's own ETag
}

// State is a snapshot of one system, for tests and `rivet dev`.
type State struct {
	ID         string
	PowerState string // On, Off, PoweringOn or PoweringOff
	Boot       BootOverride
	Media      []Media // in slot order: Cd, Floppy
	// Resets counts accepted ComputerSystem.Reset actions other than Nmi.
	Resets int
	// NMIs counts accepted Nmi resets.
	NMIs int
	// Boots counts completed power-ons (resets, SetPower).
	Boots int
	// LastBootSource is the boot target the last boot used ("Pxe", "Cd",
	// "Hdd"…; "Hdd" when no override was active); "" before the first boot.
	LastBootSource string
	// LastBootImage is the virtual media image the last boot came from,
	// "" when it did not boot from inserted media.
	LastBootImage string
	// LastBootMode is the boot mode the last boot used ("UEFI", "Legacy"):
	// the override's BootSourceOverrideMode; "" before the first boot.
	LastBootMode string
	// SecureBootEnable is the secure boot setting for the next boot;
	// SecureBootCurrentBoot whether the last boot was secure (UEFI with
	// secure boot enabled).
	SecureBootEnable      bool
	SecureBootCurrentBoot bool
	// IndicatorLED and ChassisIndicatorLED are the system's and its
	// chassis's LEDs: "Off", "Lit" or "Blinking".
	IndicatorLED        string
	ChassisIndicatorLED string
	// Fault is the per-system fault in force.
	Fault Fault
	// Requests counts the requests made to the system's System, Manager
	// and Chassis resources, those a fault answered included: how hard a
	// client hammers a failing BMC.
	Requests int64
}

// BootOverride is the Boot property's override triple.
type BootOverride struct {
	Target  string // BootSourceOverrideTarget
	Enabled string // BootSourceOverrideEnabled
	Mode    string // BootSourceOverrideMode
}

// Media is one virtual media slot.
type Media struct {
	Slot           string
	Image          string
	Inserted       bool
	WriteProtected bool
}

// advance completes a transition whose settle time has passed. Every reader
// and writer calls it first under the lock, so a transition ends exactly as
// if it had been applied at settleAt.
func (s *system) advance(now int64) {
	for len(s.delayed) > 0 && now >= s.delayed[0].at {
		d := s.delayed[0]
		s.delayed = s.delayed[1:]
		_ = s.reset(d.resetType, d.at, 0, 0)
	}
	if s.settleAt == 0 || now < s.settleAt {
		return
	}
	s.settleAt = 0
	s.gen++
	if s.on && s.pendingBoot {
		s.bootNow()
	}
	s.pendingBoot = false
}

// powerState reports the Redfish PowerState at now.
func (s *system) powerState(now int64) string {
	s.advance(now)
	switch {
	case s.settleAt != 0 && s.on:
		return PowerPoweringOn
	case s.settleAt != 0:
		return PowerPoweringOff
	case s.on:
		return PowerOn
	}
	return PowerOff
}

// switchPower starts a transition to on or off (a restart is a transition to
// on from on); it completes after settle.
func (s *system) switchPower(on bool, now int64, settle time.Duration) {
	s.on, s.pendingBoot = on, on
	s.gen++
	if settle > 0 {
		s.settleAt = now + int64(settle)
		return
	}
	s.settleAt = 0
	s.pendingBoot = false
	if on {
		s.bootNow()
	}
}

// bootNow is the firmware choosing a boot device: a Once override is used up,
// and booting from Cd or Usb records the inserted image.
func (s *system) bootNow() {
	target := targetHdd
	if s.boot[1] != enabledDisabled && s.boot[0] != targetNone {
		target = s.boot[0]
	}
	if s.boot[1] == enabledOnce {
		s.boot[1] = enabledDisabled
	}
	s.lastBoot, s.lastImage = target, ""
	s.lastMode = s.boot[2]
	current := s.secureBoot && bootModes[s.boot[2]] == "UEFI"
	if current != s.secureCurrent {
		s.secureCurrent = current
		s.secureGen++
	}
	switch target {
	case targetCd:
		if m := s.media[0]; m.inserted {
			s.lastImage = m.image
		}
	case targetUsb:
		if m := s.media[1]; m.inserted {
			s.lastImage = m.image
		}
	}
	s.bootHW()
	s.boots++
}

// etag is the System resource's ETag.
func (s *system) etag() string { return `"` + strconv.FormatUint(uint64(s.gen), 10) + `"` }

// secureETag is the SecureBoot resource's ETag.
func (s *system) secureETag() string { return `"s` + strconv.FormatUint(uint64(s.secureGen), 10) + `"` }

// chassisETag is the Chassis resource's ETag.
func (s *system) chassisETag() string {
	return `"c` + strconv.FormatUint(uint64(s.chassisGen), 10) + `"`
}

func (m *slot) etag() string { return `"m` + strconv.FormatUint(uint64(m.gen), 10) + `"` }

// snapshot copies the state out; the caller holds s.mu and has advanced it.
func (s *system) snapshot(id string, now int64) State {
	st := State{
		ID:         id,
		PowerState: s.powerState(now),
		Boot:       BootOverride{bootTargets[s.boot[0]], bootEnableds[s.boot[1]], bootModes[s.boot[2]]},
		Resets:     int(s.resets),
		NMIs:       int(s.nmis),
		Boots:      int(s.boots),
		Requests:   s.requests.Load(),

		SecureBootEnable:      s.secureBoot,
		SecureBootCurrentBoot: s.secureCurrent,
		IndicatorLED:          ledStates[s.led],
		ChassisIndicatorLED:   ledStates[s.chassisLED],
	}
	if s.boots > 0 {
		st.LastBootSource, st.LastBootImage = bootTargets[s.lastBoot], s.lastImage
		st.LastBootMode = bootModes[s.lastMode]
	}
	for i, m := range s.media {
		st.Media = append(st.Media, Media{Slot: mediaSlots[i].id, Image: m.image, Inserted: m.inserted, WriteProtected: m.writeProtected})
	}
	if f := s.fault.Load(); f != nil {
		st.Fault = *f
	}
	return st
}

// indexOf returns v's position in values.
func indexOf(values []string, v string) (uint8, bool) {
	i := slices.Index(values, v)
	return uint8(max(i, 0)), i >= 0
}
