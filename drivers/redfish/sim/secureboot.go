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
	i, ok := s.systemFor(w, r)
	if !ok {
		return
	}
	sys := &s.systems[i]
	sys.mu.Lock()
	sys.advance(s.now())
	body, etag := s.secureBootBody(i, sys), sys.secureETag()
	sys.mu.Unlock()
	writeResource(w, etag, body)
}

// patchSecureBoot sets SecureBootEnable; every other property is refused
// by name (read-only or unknown), nothing applied unless all is valid.
func (s *Simulator) patchSecureBoot(w http.ResponseWriter, r *http.Request) {
	i, body, ok := s.patchTarget(w, r)
	if !ok {
		return
	}
	sys := &s.systems[i]
	sys.mu.Lock()
	defer sys.mu.Unlock()
	current := s.secureBootBody(i, sys)
	if !ifMatch(r, sys.secureETag()) {
		writeError(w, errPrecondition(secureBootPath(i)))
		return
	}
	var enable *bool
	errs := judgeProps(body, current, func(name string, raw json.RawMessage, errs []*apiError) ([]*apiError, bool) {
		if name != "SecureBootEnable" {
			return errs, false
		}
		v, isBool := boolValue(raw)
		if !isBool || string(raw) == "null" {
			return append(errs, errPropertyType(name, string(raw))), true
		}
		enable = &v
		return errs, true
	})
	if len(errs) > 0 {
		writeError(w, join(errs))
		return
	}
	if enable != nil {
		sys.secureBoot = *enable
		sys.secureGen++
	}
	w.WriteHeader(http.StatusNoContent)
}
