package sim

import (
	"encoding/json"
	"net/http"
)

// Indicators: the system and its chassis each have an indicator LED with
// real state, shown both as IndicatorLED (Off, Lit, Blinking; deprecated
// in Redfish but what most BMCs still serve) and LocationIndicatorActive
// (true while the LED is Lit or Blinking). Either property may be
// PATCHed; LocationIndicatorActive true lights it, false turns it off.

// ledStates are the IndicatorLED values, indexed by the stored state.
var ledStates = []string{"Off", "Lit", "Blinking"}

const ledOff uint8 = 0

// indicatorProps renders one LED into body.
func indicatorProps(body obj, led uint8) {
	body["IndicatorLED"] = ledStates[led]
	body["LocationIndicatorActive"] = led != ledOff
}

// parseIndicator reads a PATCH of IndicatorLED or LocationIndicatorActive
// into the LED state to set; ok is false when name is neither.
func parseIndicator(name string, raw json.RawMessage, errs []*apiError) (change *uint8, ok bool, _ []*apiError) {
	switch name {
	case "IndicatorLED":
		v, _, isStr := stringValue(raw)
		idx, known := indexOf(ledStates, v)
		switch {
		case !isStr || v == "":
			return nil, true, append(errs, errPropertyType(name, string(raw)))
		case !known:
			return nil, true, append(errs, errPropertyValue(name, v))
		}
		return &idx, true, errs
	case "LocationIndicatorActive":
		on, isBool := boolValue(raw)
		if !isBool || string(raw) == "null" {
			return nil, true, append(errs, errPropertyType(name, string(raw)))
		}
		idx := ledOff
		if on {
			idx = 1 // Lit
		}
		return &idx, true, errs
	}
	return nil, false, errs
}

// patchChassis sets the chassis LED; anything else is refused by name, and
// nothing is applied unless everything is valid.
func (s *Simulator) patchChassis(w http.ResponseWriter, r *http.Request) {
	var change *uint8
	s.patchSystemResource(w, r, func(i int, sys *system) (obj, string, string) {
		return s.chassisBody(i, sys), sys.chassisETag(), chassisOf(i)
	}, func(name string, raw json.RawMessage, errs []*apiError) ([]*apiError, bool) {
		c, handled, errs := parseIndicator(name, raw, errs)
		if c != nil {
			change = c
		}
		return errs, handled
	}, func(sys *system) {
		if change != nil {
			sys.chassisLED = *change
			sys.chassisGen++
		}
	})
}
