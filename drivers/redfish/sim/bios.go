package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
)

// The Bios resource of every system, its @Redfish.Settings object and the
// attribute registry describing it (served from the Registries collection).
//
// A PATCH of the settings object (/Systems/{id}/Bios/Settings) is checked
// against the registry and kept pending; the Bios resource shows the
// pending values only in its settings object, and they come into force
// when the system next boots (a reset or a power on), as BIOS settings do
// on real hardware. Bios.ResetBios likewise restores the defaults at the
// next boot.

const (
	registriesPath   = "/redfish/v1/Registries"
	biosRegistryID   = "RivetSimBiosAttributeRegistry.v1_0_0"
	biosRegistryPath = registriesPath + "/" + biosRegistryID
	resetBiosAction  = "Bios.ResetBios"
)

// biosAttr is one entry of the simulated attribute registry.
type biosAttr struct {
	name, typ     string
	values        []string // Enumeration
	def           any      // default; for SystemSerial computed per system
	lower, upper  int64    // Integer, when typ is Integer
	minLen        int      // String
	maxLen        int      // String; 0: no bound
	readOnly      bool
	resetRequired bool
}

// biosAttrs is the registry, in the order the Bios resource lists them.
var biosAttrs = []biosAttr{
	{name: "BootMode", typ: "Enumeration", values: []string{"Uefi", "Bios"}, def: "Uefi", resetRequired: true},
	{name: "ProcVirtualization", typ: "Enumeration", values: []string{"Enabled", "Disabled"}, def: "Enabled", resetRequired: true},
	{name: "ProcHyperthreading", typ: "Enumeration", values: []string{"Enabled", "Disabled"}, def: "Enabled", resetRequired: true},
	{name: "ProcTurboMode", typ: "Enumeration", values: []string{"Enabled", "Disabled"}, def: "Enabled", resetRequired: true},
	{name: "ProcCoreDisable", typ: "Integer", lower: 0, upper: 32, def: int64(0), resetRequired: true},
	{name: "AdminPhone", typ: "String", maxLen: 32, def: ""},
	{name: "PxeIpv6", typ: "Boolean", def: false, resetRequired: true},
	{name: "SystemSerial", typ: "String", maxLen: 16, readOnly: true},
}

func biosAttrNamed(name string) (biosAttr, bool) {
	i := slices.IndexFunc(biosAttrs, func(a biosAttr) bool { return a.name == name })
	if i < 0 {
		return biosAttr{}, false
	}
	return biosAttrs[i], true
}

// hwState is what a system's BIOS and firmware hold beyond the defaults;
// nil (the usual case, and at scale) means untouched.
type hwState struct {
	attrs        map[string]any // current values that differ from the defaults
	pending      map[string]any // PATCHed, applied at the next boot
	resetPending bool           // Bios.ResetBios, applied at the next boot
	settingsGen  uint32         // the settings object's ETag
	biosVersion  string         // "" means the default
	bmcVersion   string
	pendingBIOS  string // a flashed BIOS image's version, in force at the next boot
}

const (
	defaultBIOSVersion = "1.0.0"
	defaultBMCVersion  = "1.0.0"
)

func (s *system) hwState() *hwState {
	if s.hw == nil {
		s.hw = &hwState{}
	}
	return s.hw
}

// bootHW applies what waits for a boot: a BIOS reset, then pending
// settings, then a flashed BIOS image. The caller holds s.mu.
func (s *system) bootHW() {
	h := s.hw
	if h == nil {
		return
	}
	if h.resetPending {
		h.attrs, h.resetPending = nil, false
	}
	if len(h.pending) > 0 {
		if h.attrs == nil {
			h.attrs = map[string]any{}
		}
		maps.Copy(h.attrs, h.pending)
		h.pending = nil
		h.settingsGen++
	}
	if h.pendingBIOS != "" {
		h.biosVersion, h.pendingBIOS = h.pendingBIOS, ""
	}
}

// biosValues are the current attributes of system i; the caller holds
// sys.mu.
func biosValues(i int, sys *system) map[string]any {
	out := make(map[string]any, len(biosAttrs))
	for _, a := range biosAttrs {
		out[a.name] = a.def
	}
	out["SystemSerial"] = fmt.Sprintf("RSIM%08d", i)
	if sys.hw != nil {
		maps.Copy(out, sys.hw.attrs)
	}
	return out
}

func (s *system) biosVersion() string {
	if s.hw != nil && s.hw.biosVersion != "" {
		return s.hw.biosVersion
	}
	return defaultBIOSVersion
}

func (s *system) bmcVersion() string {
	if s.hw != nil && s.hw.bmcVersion != "" {
		return s.hw.bmcVersion
	}
	return defaultBMCVersion
}

func (s *Simulator) biosRoutes(mux *http.ServeMux) {
	get := func(path string, h http.HandlerFunc) { mux.Handle(path, methods{http.MethodGet: h}) }
	get(systemsPath+"/{id}/Bios", s.getBios)
	mux.Handle(systemsPath+"/{id}/Bios/Settings", methods{http.MethodGet: s.getBiosSettings, http.MethodPatch: s.patchBiosSettings})
	mux.Handle(systemsPath+"/{id}/Bios/Actions/"+resetBiosAction, methods{http.MethodPost: s.resetBios})
	get(registriesPath, s.listRegistries)
	get(biosRegistryPath, s.getRegistryFile)
	get(biosRegistryPath+"/Registry", s.getBiosRegistry)
}

func (s *Simulator) getBios(w http.ResponseWriter, r *http.Request) {
	i, ok := s.systemFor(w, r)
	if !ok {
		return
	}
	p := systemPath(i) + "/Bios"
	sys := &s.systems[i]
	sys.mu.Lock()
	sys.advance(s.now())
	attrs := biosValues(i, sys)
	resetPending := sys.hw != nil && sys.hw.resetPending
	sys.mu.Unlock()
	writeJSON(w, http.StatusOK, obj{
		"@odata.id":                  p,
		"@odata.type":                "#Bios.v1_2_0.Bios",
		"Id":                         "Bios",
		"Name":                       "BIOS Configuration Current Settings",
		"AttributeRegistry":          biosRegistryID,
		"Attributes":                 attrs,
		"ResetBiosToDefaultsPending": resetPending,
		"@Redfish.Settings": obj{
			"@odata.type":         "#Settings.v1_3_5.Settings",
			"SettingsObject":      link(p + "/Settings"),
			"SupportedApplyTimes": []string{"OnReset"},
		},
		"Actions": obj{
			"#" + resetBiosAction: obj{"target": p + "/Actions/" + resetBiosAction},
		},
	})
}

// getBiosSettings shows the settings object: the current values with the
// pending ones over them.
func (s *Simulator) getBiosSettings(w http.ResponseWriter, r *http.Request) {
	i, ok := s.systemFor(w, r)
	if !ok {
		return
	}
	sys := &s.systems[i]
	sys.mu.Lock()
	sys.advance(s.now())
	attrs := biosValues(i, sys)
	var gen uint32
	if sys.hw != nil {
		maps.Copy(attrs, sys.hw.pending)
		gen = sys.hw.settingsGen
	}
	sys.mu.Unlock()
	writeResource(w, settingsETag(gen), obj{
		"@odata.id":         systemPath(i) + "/Bios/Settings",
		"@odata.type":       "#Bios.v1_2_0.Bios",
		"Id":                "Settings",
		"Name":              "BIOS Configuration Pending Settings",
		"AttributeRegistry": biosRegistryID,
		"Attributes":        attrs,
	})
}

// settingsETag is the settings object's ETag at generation gen.
func settingsETag(gen uint32) string { return `"b` + strconv.FormatUint(uint64(gen), 10) + `"` }

// patchBiosSettings takes {"Attributes": {...}} (and an optional
// @Redfish.SettingsApplyTime of OnReset). Every attribute is checked
// against the registry; nothing is kept unless all are valid. If-Match is
// honoured (412 for a stale ETag), after the body is judged.
func (s *Simulator) patchBiosSettings(w http.ResponseWriter, r *http.Request) {
	i, body, ok := s.systemRequest(w, r)
	if !ok {
		return
	}
	var errs []*apiError
	var attrs map[string]json.RawMessage
	for _, k := range sortedKeys(body) {
		switch k {
		case "Attributes":
			if err := json.Unmarshal(body[k], &attrs); err != nil || attrs == nil {
				errs = append(errs, errPropertyType("Attributes", string(body[k])))
			}
		case "@Redfish.SettingsApplyTime":
			var at struct{ ApplyTime string }
			if err := json.Unmarshal(body[k], &at); err != nil || (at.ApplyTime != "" && at.ApplyTime != "OnReset") {
				errs = append(errs, errPropertyValue("@Redfish.SettingsApplyTime/ApplyTime", at.ApplyTime))
			}
		default:
			errs = append(errs, errPropertyUnknown(k))
		}
	}
	change := map[string]any{}
	for _, name := range sortedKeys(attrs) {
		v, err := checkBiosValue(name, attrs[name])
		if err != nil {
			errs = append(errs, err)
			continue
		}
		change[name] = v
	}
	if len(errs) == 0 && len(change) == 0 {
		errs = append(errs, errEmptyJSON())
	}
	if len(errs) > 0 {
		writeError(w, join(errs))
		return
	}
	sys := &s.systems[i]
	sys.mu.Lock()
	h := sys.hwState()
	if !ifMatch(r, settingsETag(h.settingsGen)) {
		sys.mu.Unlock()
		writeError(w, errPrecondition(systemPath(i)+"/Bios/Settings"))
		return
	}
	if h.pending == nil {
		h.pending = map[string]any{}
	}
	maps.Copy(h.pending, change)
	h.settingsGen++
	sys.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// checkBiosValue validates one attribute against the registry and returns
// its value as the Bios resource shows it.
func checkBiosValue(name string, raw json.RawMessage) (any, *apiError) {
	p := "Attributes/" + name
	a, ok := biosAttrNamed(name)
	if !ok {
		return nil, errPropertyUnknown(p)
	}
	if a.readOnly {
		return nil, errPropertyNotWritable(p)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, errPropertyType(p, string(raw))
	}
	switch a.typ {
	case "Enumeration":
		str, ok := v.(string)
		if !ok {
			return nil, errPropertyType(p, string(raw))
		}
		if !slices.Contains(a.values, str) {
			return nil, errPropertyValue(p, str)
		}
		return str, nil
	case "Integer":
		num, ok := v.(json.Number)
		n, err := num.Int64()
		if !ok || err != nil {
			return nil, errPropertyType(p, string(raw))
		}
		if n < a.lower || n > a.upper {
			return nil, newError(http.StatusBadRequest, "PropertyValueOutOfRange",
				fmt.Sprintf("The value %d for the property %s is not in the supported range of acceptable values.", n, p), strconv.FormatInt(n, 10), p)
		}
		return n, nil
	case "Boolean":
		b, ok := v.(bool)
		if !ok {
			return nil, errPropertyType(p, string(raw))
		}
		return b, nil
	default: // String
		str, ok := v.(string)
		if !ok {
			return nil, errPropertyType(p, string(raw))
		}
		if len(str) < a.minLen || (a.maxLen > 0 && len(str) > a.maxLen) {
			return nil, errPropertyFormat(p, str)
		}
		return str, nil
	}
}

// resetBios is POST .../Bios/Actions/Bios.ResetBios: the defaults come
// back at the next boot, and pending settings are dropped.
func (s *Simulator) resetBios(w http.ResponseWriter, r *http.Request) {
	i, _, ok := s.systemRequest(w, r)
	if !ok {
		return
	}
	sys := &s.systems[i]
	sys.mu.Lock()
	h := sys.hwState()
	h.resetPending, h.pending = true, nil
	h.settingsGen++
	sys.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (s *Simulator) listRegistries(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, collection(registriesPath, "#MessageRegistryFileCollection.MessageRegistryFileCollection",
		"Registry File Collection", []string{biosRegistryPath}))
}

func (s *Simulator) getRegistryFile(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, obj{
		"@odata.id":   biosRegistryPath,
		"@odata.type": "#MessageRegistryFile.v1_1_3.MessageRegistryFile",
		"Id":          biosRegistryID,
		"Name":        "BIOS Attribute Registry File",
		"Registry":    biosRegistryID,
		"Languages":   []string{"en"},
		"Location":    []obj{{"Language": "en", "Uri": biosRegistryPath + "/Registry"}},
	})
}

func (s *Simulator) getBiosRegistry(w http.ResponseWriter, r *http.Request) {
	entries := make([]obj, 0, len(biosAttrs))
	for _, a := range biosAttrs {
		e := obj{
			"AttributeName": a.name, "DisplayName": a.name, "Type": a.typ,
			"ReadOnly": a.readOnly, "ResetRequired": a.resetRequired,
		}
		if a.def != nil {
			e["DefaultValue"] = a.def
		}
		switch a.typ {
		case "Enumeration":
			vals := make([]obj, len(a.values))
			for j, v := range a.values {
				vals[j] = obj{"ValueName": v, "ValueDisplayName": v}
			}
			e["Value"] = vals
		case "Integer":
			e["LowerBound"], e["UpperBound"] = a.lower, a.upper
		case "String":
			e["MinLength"] = a.minLen
			if a.maxLen > 0 {
				e["MaxLength"] = a.maxLen
			}
		}
		entries = append(entries, e)
	}
	writeJSON(w, http.StatusOK, obj{
		"@odata.id":       biosRegistryPath + "/Registry",
		"@odata.type":     "#AttributeRegistry.v1_3_6.AttributeRegistry",
		"Id":              biosRegistryID,
		"Name":            "Rivet simulated BIOS attribute registry",
		"Language":        "en",
		"RegistryVersion": "1.0.0",
		"OwningEntity":    "Rivet",
		"RegistryEntries": obj{"Attributes": entries},
	})
}
