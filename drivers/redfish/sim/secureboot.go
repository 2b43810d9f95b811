package sim

import (
	"encoding/json"
	"net/http"
)

// UEFI secure boot: each system has a SecureBoot resource. SecureBootEnable
// is what the next boot uses and may be PATCHed; SecureBootCurrentBoot is
// what the running boot used: Enabled only when the system last booted in
// UEFI mode with SecureBootEnable set (a legacy BIOS boot cannot be
// secure), Disabled otherwise and before the first boot.

func secureBootPath(i int) string { return systemPath(i) + "/SecureBoot" }

// secureBootBody renders the resource; the caller holds sys.mu.
func (s *Simulator) secureBootBody(i int, sys *system) obj {
	current := "Disabled"
	if sys.secureCurrent {
		current = "Enabled"
	}
	return obj{
		"@odata.id":             secureBootPath(i),
		"@odata.type":           "#SecureBoot.v1_1_0.SecureBoot",
		"Id":                    "SecureBoot",
		"Name":                  "UEFI Secure Boot",
		"SecureBootEnable":      sys.secureBoot,
		"SecureBootCurrentBoot": current,
		"SecureBootMode":        "DeployedMode",
	}
}

func (s *Simulator) getSecureBoot(w http.ResponseWriter, r *http.Request) {
	s.getSystemResource(w, r, func(i int, sys *system) (obj, string) {
		sys.advance(s.now())
		return s.secureBootBody(i, sys), sys.secureETag()
	})
}

// patchSecureBoot sets SecureBootEnable; every other property is refused
// by name (read-only or unknown), nothing applied unless all is valid.
func (s *Simulator) patchSecureBoot(w http.ResponseWriter, r *http.Request) {
	var enable *bool
	s.patchSystemResource(w, r, func(i int, sys *system) (obj, string, string) {
		return s.secureBootBody(i, sys), sys.secureETag(), secureBootPath(i)
	}, func(name string, raw json.RawMessage, errs []*apiError) ([]*apiError, bool) {
		if name != "SecureBootEnable" {
			return errs, false
		}
		v, isBool := boolValue(raw)
		if !isBool || string(raw) == "null" {
			return append(errs, errPropertyType(name, string(raw))), true
		}
		enable = &v
		return errs, true
	}, func(sys *system) {
		if enable != nil {
			sys.secureBoot = *enable
			sys.secureGen++
		}
	})
}
