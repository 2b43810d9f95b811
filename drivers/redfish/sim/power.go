package sim

import (
	"encoding/json"
	"net/http"
	"time"
)

// resetTypes are the ResetType values the Reset action advertises and takes.
var resetTypes = []string{"On", "ForceOff", "GracefulShutdown", "GracefulRestart", "ForceRestart", "Nmi", "PushPowerButton"}

const resetAction = "ComputerSystem.Reset"

// reset applies one ResetType; the caller holds s.mu and has checked rt.
//
//   - On powers on an off (or powering-off) system; on an on system it is a
//     no-op, as on most BMCs.
//   - ForceOff and GracefulShutdown power off (no-op when already off).
//   - GracefulRestart and ForceRestart reboot an on system and power on an
//     off one, so the system always ends up booting.
//   - PushPowerButton toggles.
//   - Nmi needs the system On (not PoweringOn) and only counts.
//
// Every power change passes through PoweringOn/PoweringOff for settle.
// With delay (Quirks.PowerDelay) the change is queued instead and applied
// delay later, without settle; an NMI is never delayed.
func (s *system) reset(rt string, now int64, settle, delay time.Duration) *apiError {
	state := s.powerState(now)
	if delay > 0 && rt != "Nmi" {
		// Applied in order, each delay after it was accepted.
		s.delayed = append(s.delayed, delayedReset{at: now + int64(delay), resetType: rt})
		return nil
	}
	switch rt {
	case "Nmi":
		if state != PowerOn {
			return errConflict("ResourceInStandby",
				"The request could not be performed because the resource is in standby: an NMI needs the system On, it is "+state+".")
		}
		s.nmis++
		return nil
	case "On":
		if !s.on {
			s.switchPower(true, now, settle)
		}
	case "ForceOff", "GracefulShutdown":
		if s.on {
			s.switchPower(false, now, settle)
		}
	case "GracefulRestart", "ForceRestart":
		s.switchPower(true, now, settle)
	case "PushPowerButton":
		s.switchPower(!s.on, now, settle)
	}
	s.resets++
	return nil
}

// reset is POST .../Actions/ComputerSystem.Reset {"ResetType": …}. As
// HTTP orders it, a failed If-Match precondition wins over a bad body.
func (s *Simulator) reset(w http.ResponseWriter, r *http.Request) {
	i, body, ok := s.systemRequest(w, r)
	if !ok {
		return
	}
	rt, perr := parseReset(body)
	sys := &s.systems[i]
	sys.mu.Lock()
	now := s.now()
	sys.advance(now)
	var aerr *apiError
	switch {
	case !ifMatch(r, sys.etag()):
		aerr = errPrecondition(systemPath(i))
	case perr != nil:
		aerr = perr
	default:
		aerr = sys.reset(rt, now, s.opts.PowerSettle, s.opts.Quirks.PowerDelay)
	}
	sys.mu.Unlock()
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// parseReset validates the action body: exactly one advertised ResetType.
// A missing ResetType is refused rather than given a default, so a driver
// that forgets it finds out here.
func parseReset(body map[string]json.RawMessage) (string, *apiError) {
	var rt string
	var errs []*apiError
	for _, name := range sortedKeys(body) {
		if name != "ResetType" {
			errs = append(errs, errParamUnknown(resetAction, name))
			continue
		}
		v, _, ok := stringValue(body[name])
		switch _, known := indexOf(resetTypes, v); {
		case !ok:
			errs = append(errs, errParamFormat(resetAction, name, string(body[name])))
		case !known:
			errs = append(errs, errParamValue(resetAction, name, v))
		}
		rt = v
	}
	if _, ok := body["ResetType"]; !ok {
		errs = append(errs, errParamMissing(resetAction, "ResetType"))
	}
	if len(errs) > 0 {
		return "", join(errs)
	}
	return rt, nil
}
