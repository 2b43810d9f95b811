package sim

import (
	"encoding/json"
	"net/http"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The UpdateService (SimpleUpdate from an http(s) URL), its
// FirmwareInventory (a BIOS and a BMC item per system) and the
// TaskService tracking each update.
//
// SimpleUpdate never downloads anything: the image's file name carries the
// version it installs, after its last '-' ("bios-2.1.0.bin" installs
// 2.1.0). The update is a Task that runs for Options.UpdateDuration of the
// simulator's clock, then completes: a BMC image is in force at once, a
// BIOS image at the system's next boot (as a BIOS flash applies on reset).
// An image name without a version makes the task end in Exception, so a
// client's failure path can be exercised.

const (
	updateServicePath   = "/redfish/v1/UpdateService"
	firmwareInvPath     = updateServicePath + "/FirmwareInventory"
	simpleUpdateAction  = "UpdateService.SimpleUpdate"
	taskServicePath     = "/redfish/v1/TaskService"
	tasksPath           = taskServicePath + "/Tasks"
	DefaultUpdateLength = 2 * time.Second
)

// fwItem names the FirmwareInventory item of a component of system i.
func fwItem(component string, i int) string { return component + "-" + SystemID(i) }

// task is one SimpleUpdate in progress or done.
type task struct {
	id        string
	system    int
	component string // "BIOS" or "BMC"
	image     string
	version   string // "" when the image name carries none: the task fails
	start     int64
	doneAt    int64
	state     string // Running, Completed, Exception
	message   string
}

// taskStore holds every task; its lock is taken before a system's, never
// while holding one.
type taskStore struct {
	mu      sync.Mutex
	tasks   []*task
	running int
}

var imageVersion = regexp.MustCompile(`-([0-9][0-9A-Za-z.+_]*?)(\.(bin|img|fw|hpm|efi|cap|exe|zip|tar|gz))*$`)

// versionOf is the version an image's file name carries, or "".
func versionOf(image string) string {
	u, err := url.Parse(image)
	if err != nil {
		return ""
	}
	m := imageVersion.FindStringSubmatch(path.Base(u.Path))
	if m == nil {
		return ""
	}
	return m[1]
}

func (s *Simulator) updateRoutes(mux *http.ServeMux) {
	get := func(p string, h http.HandlerFunc) { mux.Handle(p, methods{http.MethodGet: h}) }
	get(updateServicePath, s.getUpdateService)
	get(firmwareInvPath, s.listFirmware)
	get(firmwareInvPath+"/{fid}", s.getFirmware)
	mux.Handle(updateServicePath+"/Actions/"+simpleUpdateAction, methods{http.MethodPost: s.simpleUpdate})
	get(taskServicePath, s.getTaskService)
	get(tasksPath, s.listTasks)
	get(tasksPath+"/{tid}", s.getTask)
}

// withTasks settles the tasks whose time has come before any request is
// served, so every resource shows their effects.
func (s *Simulator) withTasks(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.settleTasks()
		next.ServeHTTP(w, r)
	})
}

// settleTasks completes every running task whose time has passed.
func (s *Simulator) settleTasks() {
	ts := &s.tasks
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.running == 0 {
		return
	}
	now := s.now()
	for _, t := range ts.tasks {
		if t.state != "Running" || now < t.doneAt {
			continue
		}
		ts.running--
		if t.version == "" {
			t.state, t.message = "Exception", "The image "+t.image+" carries no version in its file name (name-<version>.bin); nothing was flashed."
			continue
		}
		t.state, t.message = "Completed", "The "+t.component+" firmware was updated to "+t.version+"."
		sys := &s.systems[t.system]
		sys.mu.Lock()
		h := sys.hwState()
		if t.component == "BMC" {
			h.bmcVersion = t.version
		} else {
			h.pendingBIOS = t.version
			t.message += " It is in force after the next reset."
		}
		sys.gen++
		sys.mu.Unlock()
	}
}

func (s *Simulator) getUpdateService(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, obj{
		"@odata.id":         updateServicePath,
		"@odata.type":       "#UpdateService.v1_11_0.UpdateService",
		"Id":                "UpdateService",
		"Name":              "Update Service",
		"ServiceEnabled":    true,
		"Status":            statusOK(),
		"FirmwareInventory": link(firmwareInvPath),
		"Actions": obj{
			"#" + simpleUpdateAction: obj{
				"target": updateServicePath + "/Actions/" + simpleUpdateAction,
				"TransferProtocol@Redfish.AllowableValues": []string{"HTTP", "HTTPS"},
			},
		},
	})
}

func (s *Simulator) listFirmware(w http.ResponseWriter, r *http.Request) {
	members := make([]string, 0, 2*len(s.systems))
	for i := range s.systems {
		members = append(members, firmwareInvPath+"/"+fwItem("BIOS", i), firmwareInvPath+"/"+fwItem("BMC", i))
	}
	writeJSON(w, http.StatusOK, collection(firmwareInvPath, "#SoftwareInventoryCollection.SoftwareInventoryCollection", "Firmware Collection", members))
}

// firmwareFor resolves {fid} ("BIOS-node-i", "BMC-node-i").
func (s *Simulator) firmwareFor(fid string) (component string, i int, ok bool) {
	component, id, found := strings.Cut(fid, "-")
	if !found || (component != "BIOS" && component != "BMC") {
		return "", 0, false
	}
	i, ok = s.index(id)
	return component, i, ok
}

func (s *Simulator) getFirmware(w http.ResponseWriter, r *http.Request) {
	component, i, ok := s.firmwareFor(r.PathValue("fid"))
	if !ok {
		writeError(w, errNotFound(r.URL.Path))
		return
	}
	sys := &s.systems[i]
	sys.mu.Lock()
	sys.advance(s.now())
	version, related, name := sys.biosVersion(), systemPath(i), "BIOS firmware"
	if component == "BMC" {
		version, related, name = sys.bmcVersion(), managerPath(i), "BMC firmware"
	}
	sys.mu.Unlock()
	writeJSON(w, http.StatusOK, obj{
		"@odata.id":   firmwareInvPath + "/" + fwItem(component, i),
		"@odata.type": "#SoftwareInventory.v1_4_0.SoftwareInventory",
		"Id":          fwItem(component, i),
		"Name":        name,
		"Version":     version,
		"Updateable":  true,
		"Status":      statusOK(),
		"RelatedItem": links(related),
	})
}

// simpleUpdate is POST .../UpdateService.SimpleUpdate {"ImageURI",
// "TransferProtocol"?, "Targets"?}. Targets name FirmwareInventory items;
// without them a one-system simulator flashes its BIOS (or its BMC when
// the image's name starts with "bmc").
func (s *Simulator) simpleUpdate(w http.ResponseWriter, r *http.Request) {
	body, aerr := readObject(r)
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	var errs []*apiError
	var image string
	var targets []string
	for _, k := range sortedKeys(body) {
		switch k {
		case "ImageURI":
			v, _, ok := stringValue(body[k])
			u, err := url.Parse(v)
			if !ok || v == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				errs = append(errs, errParamFormat(simpleUpdateAction, "ImageURI", v))
			}
			image = v
		case "TransferProtocol":
			v, _, ok := stringValue(body[k])
			if !ok || (v != "HTTP" && v != "HTTPS") {
				errs = append(errs, errParamValue(simpleUpdateAction, "TransferProtocol", v))
			}
		case "Targets":
			if err := json.Unmarshal(body[k], &targets); err != nil {
				errs = append(errs, errParamFormat(simpleUpdateAction, "Targets", string(body[k])))
			}
		default:
			errs = append(errs, errParamUnknown(simpleUpdateAction, k))
		}
	}
	if _, ok := body["ImageURI"]; !ok {
		errs = append(errs, errParamMissing(simpleUpdateAction, "ImageURI"))
	}
	type item struct {
		component string
		system    int
	}
	var items []item
	for _, t := range targets {
		c, i, ok := s.firmwareFor(strings.TrimPrefix(t, firmwareInvPath+"/"))
		if !ok || !strings.HasPrefix(t, firmwareInvPath+"/") {
			errs = append(errs, errParamValue(simpleUpdateAction, "Targets", t))
			continue
		}
		items = append(items, item{c, i})
	}
	if len(errs) == 0 && len(targets) == 0 {
		if len(s.systems) != 1 {
			errs = append(errs, errParamMissing(simpleUpdateAction, "Targets"))
		} else {
			c := "BIOS"
			if u, err := url.Parse(image); err == nil && strings.HasPrefix(strings.ToLower(path.Base(u.Path)), "bmc") {
				c = "BMC"
			}
			items = append(items, item{c, 0})
		}
	}
	if len(errs) > 0 {
		writeError(w, join(errs))
		return
	}
	now := s.now()
	ts := &s.tasks
	ts.mu.Lock()
	var first *task
	for _, it := range items {
		t := &task{id: strconv.Itoa(len(ts.tasks) + 1), system: it.system, component: it.component, image: image,
			version: versionOf(image), start: now, doneAt: now + int64(s.opts.UpdateDuration), state: "Running"}
		ts.tasks = append(ts.tasks, t)
		ts.running++
		if first == nil {
			first = t
		}
	}
	body2 := taskBody(first)
	ts.mu.Unlock()
	w.Header().Set("Location", tasksPath+"/"+first.id)
	writeJSON(w, http.StatusAccepted, body2)
}

func taskBody(t *task) obj {
	status, pct := "OK", 50
	switch t.state {
	case "Completed":
		pct = 100
	case "Exception":
		status, pct = "Critical", 100
	}
	b := obj{
		"@odata.id":       tasksPath + "/" + t.id,
		"@odata.type":     "#Task.v1_6_0.Task",
		"Id":              t.id,
		"Name":            "Firmware update " + t.id,
		"TaskState":       t.state,
		"TaskStatus":      status,
		"PercentComplete": pct,
		"StartTime":       time.Unix(0, t.start).UTC().Format(time.RFC3339),
		"Payload":         obj{"TargetUri": updateServicePath + "/Actions/" + simpleUpdateAction, "HttpOperation": "POST"},
	}
	if t.state != "Running" {
		b["EndTime"] = time.Unix(0, t.doneAt).UTC().Format(time.RFC3339)
		b["Messages"] = []obj{{"MessageId": "Update.1.0." + map[bool]string{true: "UpdateSuccessful", false: "ApplyFailed"}[t.state == "Completed"], "Message": t.message}}
	}
	return b
}

func (s *Simulator) getTaskService(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, obj{
		"@odata.id": taskServicePath, "@odata.type": "#TaskService.v1_2_0.TaskService",
		"Id": "TaskService", "Name": "Task Service", "ServiceEnabled": true, "Status": statusOK(),
		"Tasks": link(tasksPath),
	})
}

func (s *Simulator) listTasks(w http.ResponseWriter, r *http.Request) {
	s.tasks.mu.Lock()
	members := make([]string, len(s.tasks.tasks))
	for i, t := range s.tasks.tasks {
		members[i] = tasksPath + "/" + t.id
	}
	s.tasks.mu.Unlock()
	writeJSON(w, http.StatusOK, collection(tasksPath, "#TaskCollection.TaskCollection", "Task Collection", members))
}

func (s *Simulator) getTask(w http.ResponseWriter, r *http.Request) {
	s.tasks.mu.Lock()
	i := slices.IndexFunc(s.tasks.tasks, func(t *task) bool { return t.id == r.PathValue("tid") })
	var body obj
	if i >= 0 {
		body = taskBody(s.tasks.tasks[i])
	}
	s.tasks.mu.Unlock()
	if body == nil {
		writeError(w, errNotFound(r.URL.Path))
		return
	}
	writeJSON(w, http.StatusOK, body)
}
