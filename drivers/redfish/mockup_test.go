package redfish_test

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// mockupBMC serves a DMTF Redfish mockup (a tree of index.json files, one
// per resource path) as a BMC would: GETs answer the files, and the few
// actions a driver needs change them, so the mockup behaves as a stateful
// peer whose resource shapes nobody here wrote:
//   - POST …/Actions/ComputerSystem.Reset changes PowerState at once (a
//     power-on consumes a Once boot override and records what it booted);
//   - PATCH of a System's Boot, validated against its allowable values;
//   - VirtualMedia InsertMedia/EjectMedia actions and the PATCH fallback;
//   - sessions (POST/DELETE), X-Auth-Token, or HTTP Basic; the service
//     root alone is public.
//
// The mockup's own data is never changed on disk.
type mockupBMC struct {
	URL  string
	user string
	pass string

	mu        sync.Mutex
	res       map[string]map[string]any // by path, no trailing slash
	tokens    map[string]string         // token → session path
	lastBoot  map[string]string         // system path → "target image"
	nmis      map[string]int
	mutations []string // "METHOD path" of every accepted change
}

// startMockup loads dir and serves it on 127.0.0.1.
func startMockup(t *testing.T, dir string) *mockupBMC {
	t.Helper()
	m := &mockupBMC{user: "admin", pass: password, res: map[string]map[string]any{},
		tokens: map[string]string{}, lastBoot: map[string]string{}, nmis: map[string]int{}}
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || e.Name() != "index.json" {
			return err
		}
		rel, _ := filepath.Rel(dir, filepath.Dir(p))
		path := "/redfish/v1"
		if rel != "." {
			path += "/" + filepath.ToSlash(rel)
		}
		raw, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		var body map[string]any
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber() // drive sizes exceed float64's 53 bits
		if err := dec.Decode(&body); err != nil {
			return nil // not a resource ($metadata and the like)
		}
		m.res[path] = body
		return nil
	})
	if err != nil || len(m.res) == 0 {
		t.Fatalf("load mockup %s: %v (%d resources)", dir, err, len(m.res))
	}
	srv := httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(srv.Close)
	m.URL = srv.URL
	return m
}

func (m *mockupBMC) serve(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimRight(r.URL.Path, "/")
	m.mu.Lock()
	defer m.mu.Unlock()
	public := r.Method == http.MethodGet && (path == "/redfish" || path == "/redfish/v1")
	isLogin := r.Method == http.MethodPost && path == "/redfish/v1/SessionService/Sessions"
	if !public && !isLogin && !m.authorized(r) {
		w.Header().Set("WWW-Authenticate", `Basic realm="mockup"`)
		mockupError(w, http.StatusUnauthorized, "Base.1.8.NoValidSession", "no valid session or credentials")
		return
	}
	var body map[string]any
	if r.Method == http.MethodPost || r.Method == http.MethodPatch {
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&body); err != nil {
			mockupError(w, http.StatusBadRequest, "Base.1.8.MalformedJSON", "the request body is not a JSON object")
			return
		}
	}
	switch {
	case r.Method == http.MethodGet && path == "/redfish":
		writeMockup(w, http.StatusOK, map[string]any{"v1": "/redfish/v1/"})
	case r.Method == http.MethodGet:
		res, ok := m.res[path]
		if !ok {
			mockupError(w, http.StatusNotFound, "Base.1.8.ResourceMissingAtURI", "no resource at "+path)
			return
		}
		writeMockup(w, http.StatusOK, res)
	case isLogin:
		m.login(w, body)
	case r.Method == http.MethodDelete && strings.HasPrefix(path, "/redfish/v1/SessionService/Sessions/"):
		for tok, p := range m.tokens {
			if p == path {
				delete(m.tokens, tok)
			}
		}
		delete(m.res, path)
		w.WriteHeader(http.StatusNoContent)
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/Actions/ComputerSystem.Reset"):
		m.reset(w, strings.TrimSuffix(path, "/Actions/ComputerSystem.Reset"), body)
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/Actions/VirtualMedia.InsertMedia"):
		m.media(w, strings.TrimSuffix(path, "/Actions/VirtualMedia.InsertMedia"), body, true)
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/Actions/VirtualMedia.EjectMedia"):
		m.media(w, strings.TrimSuffix(path, "/Actions/VirtualMedia.EjectMedia"), map[string]any{"Image": nil, "Inserted": false}, false)
	case r.Method == http.MethodPatch && m.isType(path, "VirtualMedia"):
		m.media(w, path, body, false)
	case r.Method == http.MethodPatch && m.isType(path, "ComputerSystem"):
		m.patchBoot(w, path, body)
	default:
		mockupError(w, http.StatusMethodNotAllowed, "Base.1.8.OperationNotAllowed", r.Method+" "+path+" is not allowed")
	}
}

func (m *mockupBMC) authorized(r *http.Request) bool {
	if tok := r.Header.Get("X-Auth-Token"); tok != "" {
		_, ok := m.tokens[tok]
		return ok
	}
	u, p, ok := r.BasicAuth()
	return ok && u == m.user && p == m.pass
}

func (m *mockupBMC) isType(path, kind string) bool {
	t, _ := m.res[path]["@odata.type"].(string)
	return strings.Contains(t, "#"+kind+".")
}

func (m *mockupBMC) login(w http.ResponseWriter, body map[string]any) {
	if body["UserName"] != m.user || body["Password"] != m.pass {
		mockupError(w, http.StatusUnauthorized, "Base.1.8.NoValidSession", "the user name or password is wrong")
		return
	}
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	tok := hex.EncodeToString(b)
	p := "/redfish/v1/SessionService/Sessions/" + tok[:8]
	m.tokens[tok] = p
	s := map[string]any{"@odata.id": p, "@odata.type": "#Session.v1_0_0.Session", "Id": tok[:8], "UserName": m.user}
	m.res[p] = s
	w.Header().Set("X-Auth-Token", tok)
	w.Header().Set("Location", p)
	writeMockup(w, http.StatusCreated, s)
}

// reset applies a ResetType the System advertises.
func (m *mockupBMC) reset(w http.ResponseWriter, sysPath string, body map[string]any) {
	sys, ok := m.res[sysPath]
	if !ok || !m.isType(sysPath, "ComputerSystem") {
		mockupError(w, http.StatusNotFound, "Base.1.8.ResourceMissingAtURI", "no system at "+sysPath)
		return
	}
	rt, _ := body["ResetType"].(string)
	action, _ := lookup(sys, "Actions", "#ComputerSystem.Reset").(map[string]any)
	allowed, _ := action["ResetType@Redfish.AllowableValues"].([]any)
	if !slices.Contains(allowed, any(rt)) {
		mockupError(w, http.StatusBadRequest, "Base.1.8.ActionParameterValueNotInList", "ResetType "+rt+" is not allowed")
		return
	}
	on := sys["PowerState"] == "On"
	switch rt {
	case "Nmi":
		if !on {
			mockupError(w, http.StatusConflict, "Base.1.8.ResourceInStandby", "an NMI needs the system On")
			return
		}
		m.nmis[sysPath]++
	case "On", "ForceOn":
		if !on {
			m.powerOn(sysPath, sys)
		}
	case "ForceOff", "GracefulShutdown":
		sys["PowerState"] = "Off"
	case "GracefulRestart", "ForceRestart", "PowerCycle":
		m.powerOn(sysPath, sys)
	case "PushPowerButton":
		if on {
			sys["PowerState"] = "Off"
		} else {
			m.powerOn(sysPath, sys)
		}
	}
	m.mutations = append(m.mutations, "POST "+sysPath+" "+rt)
	w.WriteHeader(http.StatusNoContent)
}

// powerOn boots the system: a Once override is used up, and a boot from
// Cd records the image of the CD slot that holds one.
func (m *mockupBMC) powerOn(sysPath string, sys map[string]any) {
	sys["PowerState"] = "On"
	boot, _ := sys["Boot"].(map[string]any)
	target, image := "Hdd", ""
	if boot != nil && boot["BootSourceOverrideEnabled"] != "Disabled" && boot["BootSourceOverrideTarget"] != "None" {
		target, _ = boot["BootSourceOverrideTarget"].(string)
		if boot["BootSourceOverrideEnabled"] == "Once" {
			boot["BootSourceOverrideEnabled"] = "Disabled"
		}
	}
	if target == "Cd" {
		for p, r := range m.res {
			types, _ := r["MediaTypes"].([]any)
			if m.isType(p, "VirtualMedia") && slices.Contains(types, any("CD")) && r["Inserted"] == true {
				image, _ = r["Image"].(string)
			}
		}
	}
	m.lastBoot[sysPath] = strings.TrimSpace(target + " " + image)
}

// patchBoot merges a Boot override after checking the target against the
// System's allowable values; any other property is refused.
func (m *mockupBMC) patchBoot(w http.ResponseWriter, sysPath string, body map[string]any) {
	sys := m.res[sysPath]
	boot, _ := sys["Boot"].(map[string]any)
	patch, ok := body["Boot"].(map[string]any)
	if boot == nil || !ok || len(body) != 1 {
		mockupError(w, http.StatusBadRequest, "Base.1.8.PropertyNotWritable", "only Boot may be patched")
		return
	}
	allowed, _ := boot["BootSourceOverrideTarget@Redfish.AllowableValues"].([]any)
	if t, ok := patch["BootSourceOverrideTarget"]; ok && len(allowed) > 0 && !slices.Contains(allowed, t) {
		mockupError(w, http.StatusBadRequest, "Base.1.8.PropertyValueNotInList", "BootSourceOverrideTarget not allowed")
		return
	}
	for k, v := range patch {
		boot[k] = v
	}
	m.mutations = append(m.mutations, "PATCH "+sysPath)
	w.WriteHeader(http.StatusNoContent)
}

// media inserts (Image set) or ejects (Image null or Inserted false).
func (m *mockupBMC) media(w http.ResponseWriter, p string, body map[string]any, action bool) {
	vm, ok := m.res[p]
	if !ok || !m.isType(p, "VirtualMedia") {
		mockupError(w, http.StatusNotFound, "Base.1.8.ResourceMissingAtURI", "no virtual media at "+p)
		return
	}
	img, hasImage := body["Image"]
	if action && (img == nil || img == "") {
		mockupError(w, http.StatusBadRequest, "Base.1.8.ActionParameterMissing", "InsertMedia needs Image")
		return
	}
	for _, k := range []string{"Image", "Inserted", "WriteProtected"} {
		if v, ok := body[k]; ok {
			vm[k] = v
		}
	}
	if hasImage && img != nil && img != "" {
		if _, ok := body["Inserted"]; !ok {
			vm["Inserted"] = true
		}
	}
	if vm["Inserted"] == false || (hasImage && (img == nil || img == "")) {
		vm["Image"], vm["Inserted"] = nil, false
	}
	m.mutations = append(m.mutations, "CHANGE "+p)
	w.WriteHeader(http.StatusNoContent)
}

// systems lists the mockup's System paths.
func (m *mockupBMC) systems() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	members, _ := m.res["/redfish/v1/Systems"]["Members"].([]any)
	for _, x := range members {
		if l, ok := x.(map[string]any); ok {
			p, _ := l["@odata.id"].(string)
			out = append(out, strings.TrimRight(p, "/"))
		}
	}
	return out
}

func (m *mockupBMC) booted(sysPath string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.lastBoot[sysPath]
}

func lookup(v map[string]any, keys ...string) any {
	var cur any = v
	for _, k := range keys {
		o, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = o[k]
	}
	return cur
}

func writeMockup(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

func mockupError(w http.ResponseWriter, status int, id, msg string) {
	writeMockup(w, status, map[string]any{"error": map[string]any{
		"code": id, "message": msg,
		"@Message.ExtendedInfo": []any{map[string]any{"MessageId": id, "Message": msg}},
	}})
}
