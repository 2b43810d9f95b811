package sim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
)

func systemPath(i int) string  { return systemsPath + "/" + SystemID(i) }
func managerPath(i int) string { return managersPath + "/" + ManagerID(i) }
func chassisOf(i int) string   { return chassisPath + "/" + SystemID(i) }

// systemFor resolves {id} or answers 404.
func (s *Simulator) systemFor(w http.ResponseWriter, r *http.Request) (int, bool) {
	i, ok := s.index(r.PathValue("id"))
	if !ok {
		writeError(w, errNotFound(r.URL.Path))
	}
	return i, ok
}

func (s *Simulator) listSystems(w http.ResponseWriter, r *http.Request) {
	members := make([]string, len(s.systems))
	for i := range members {
		members[i] = systemPath(i)
	}
	writeJSON(w, http.StatusOK, collection(systemsPath, "#ComputerSystemCollection.ComputerSystemCollection", "Computer System Collection", members))
}

func (s *Simulator) getSystem(w http.ResponseWriter, r *http.Request) {
	s.getSystemResource(w, r, func(i int, sys *system) (obj, string) {
		body := s.systemBody(i, sys, s.now())
		return body, sys.etag()
	})
}

// systemBody renders a ComputerSystem; the caller holds sys.mu.
func (s *Simulator) systemBody(i int, sys *system, now int64) obj {
	hw := s.hardware(i)
	p := systemPath(i)
	body := obj{
		"@odata.id":    p,
		"@odata.type":  "#ComputerSystem.v1_20_0.ComputerSystem",
		"Id":           SystemID(i),
		"Name":         "Simulated node " + strconv.Itoa(i),
		"SystemType":   "Physical",
		"Manufacturer": "Rivet",
		"Model":        "rivet-sim",
		"SerialNumber": fmt.Sprintf("RSIM%08d", i),
		"UUID":         uuidFrom(s.opts.Seed, i, uuidSystem),
		"BiosVersion":  sys.biosVersion(),
		"Status":       statusOK(),
		"PowerState":   sys.powerState(now),
		"Boot": obj{
			"BootSourceOverrideTarget":                         bootTargets[sys.boot[0]],
			"BootSourceOverrideEnabled":                        bootEnableds[sys.boot[1]],
			"BootSourceOverrideMode":                           bootModes[sys.boot[2]],
			"BootSourceOverrideTarget@Redfish.AllowableValues": bootTargets,
			"BootSourceOverrideMode@Redfish.AllowableValues":   bootModes,
		},
		"ProcessorSummary": obj{
			"Count":                 hw.sockets,
			"Model":                 hw.cpuModel,
			"CoreCount":             hw.sockets * hw.coresPerSocket,
			"LogicalProcessorCount": 2 * hw.sockets * hw.coresPerSocket,
			"Status":                statusOK(),
		},
		"MemorySummary": obj{
			"TotalSystemMemoryGiB": hw.memoryGiB(),
			"Status":               statusOK(),
		},
		"Processors":         link(p + "/Processors"),
		"Memory":             link(p + "/Memory"),
		"EthernetInterfaces": link(p + "/EthernetInterfaces"),
		"SimpleStorage":      link(p + "/SimpleStorage"),
		"Storage":            link(p + "/Storage"),
		"Bios":               link(p + "/Bios"),
		"Links": obj{
			"Chassis":   links(chassisOf(i)),
			"ManagedBy": links(managerPath(i)),
		},
		"Actions": obj{
			"#ComputerSystem.Reset": obj{
				"target":                            p + "/Actions/" + resetAction,
				"ResetType@Redfish.AllowableValues": resetTypes,
			},
		},
	}
	if s.opts.SystemVirtualMedia {
		body["VirtualMedia"] = link(p + "/VirtualMedia")
	}
	body["SecureBoot"] = link(secureBootPath(i))
	indicatorProps(body, sys.led)
	return body
}

// patchSystem accepts the Boot override triple and the indicator
// (IndicatorLED, LocationIndicatorActive). Anything else is refused
// by name, and nothing is applied unless everything is valid.
func (s *Simulator) patchSystem(w http.ResponseWriter, r *http.Request) {
	i, body, ok := s.patchTarget(w, r)
	if !ok {
		return
	}
	sys := &s.systems[i]
	sys.mu.Lock()
	aerr := s.applyPatch(i, sys, body, r)
	sys.mu.Unlock()
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// applyPatch checks If-Match, then the body, then applies it; the caller
// holds sys.mu.
func (s *Simulator) applyPatch(i int, sys *system, body map[string]json.RawMessage, r *http.Request) *apiError {
	current := s.systemBody(i, sys, s.now()) // advances, and names the read-only properties
	if !ifMatch(r, sys.etag()) {
		return errPrecondition(systemPath(i))
	}
	var change [3]*uint8
	var led *uint8
	errs := judgeProps(body, current, func(name string, raw json.RawMessage, errs []*apiError) ([]*apiError, bool) {
		c, isLED, errs := parseIndicator(name, raw, errs)
		switch {
		case isLED:
			if c != nil {
				led = c
			}
		case name == "Boot":
			change, errs = parseBoot(raw, errs)
		default:
			return errs, false
		}
		return errs, true
	})
	if len(errs) > 0 {
		return join(errs)
	}
	for k, v := range change {
		if v != nil {
			sys.boot[k] = *v
		}
	}
	if led != nil {
		sys.led = *led
	}
	if s.opts.Quirks.BootAlwaysContinuous && sys.boot[1] == enabledOnce {
		sys.boot[1] = enabledContinuous
	}
	sys.gen++
	return nil
}

// bootFields are the writable Boot properties, in sys.boot order.
var bootFields = []struct {
	name   string
	values []string
}{
	{"BootSourceOverrideTarget", bootTargets},
	{"BootSourceOverrideEnabled", bootEnableds},
	{"BootSourceOverrideMode", bootModes},
}

// parseBoot validates a Boot object against the allowable values.
func parseBoot(raw json.RawMessage, errs []*apiError) ([3]*uint8, []*apiError) {
	var change [3]*uint8
	var boot map[string]json.RawMessage
	if err := json.Unmarshal(raw, &boot); err != nil || boot == nil {
		return change, append(errs, errPropertyType("Boot", string(raw)))
	}
	for _, name := range sortedKeys(boot) {
		k := -1
		for j, f := range bootFields {
			if f.name == name {
				k = j
			}
		}
		if k < 0 {
			errs = append(errs, errPropertyUnknown("Boot/"+name))
			continue
		}
		v, _, ok := stringValue(boot[name])
		idx, known := indexOf(bootFields[k].values, v)
		switch {
		case !ok || v == "":
			errs = append(errs, errPropertyType("Boot/"+name, string(boot[name])))
		case !known:
			errs = append(errs, errPropertyValue("Boot/"+name, v))
		default:
			change[k] = &idx
		}
	}
	return change, errs
}
