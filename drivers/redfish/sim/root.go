package sim

import (
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"
)

const (
	rootPath     = "/redfish/v1/"
	systemsPath  = "/redfish/v1/Systems"
	managersPath = "/redfish/v1/Managers"
	chassisPath  = "/redfish/v1/Chassis"
)

// methods dispatches one path by HTTP method and answers anything else with
// a Redfish 405 that lists what is allowed.
type methods map[string]http.HandlerFunc

func (m methods) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h, ok := m[r.Method]
	if !ok && r.Method == http.MethodHead {
		h, ok = m[http.MethodGet]
	}
	if !ok {
		allow := make([]string, 0, len(m))
		for k := range m {
			allow = append(allow, k)
		}
		slices.Sort(allow)
		writeError(w, errMethod(r.Method, r.URL.Path, strings.Join(allow, ", ")))
		return
	}
	h(w, r)
}

// routes builds the handler chain: path clean-up, faults, auth, then the
// resource handlers.
func (s *Simulator) routes() http.Handler {
	mux := http.NewServeMux()
	get := func(path string, h http.HandlerFunc) { mux.Handle(path, methods{http.MethodGet: h}) }

	mux.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, errNotFound(r.URL.Path))
	}))
	get("/redfish", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, obj{"v1": rootPath})
	})
	get("/redfish/v1/{$}", s.getRoot)
	get("/redfish/v1", s.getRoot)

	get(sessionServicePath, s.getSessionService)
	mux.Handle(sessionsPath, methods{http.MethodGet: s.listSessions, http.MethodPost: s.login})
	mux.Handle(sessionsPath+"/{sid}", methods{http.MethodGet: s.getSession, http.MethodDelete: s.logout})
	get(accountServicePath, s.getAccountService)
	get(accountServicePath+"/Accounts", s.listAccounts)
	get(accountServicePath+"/Accounts/{aid}", s.getAccount)

	get(systemsPath, s.listSystems)
	mux.Handle(systemsPath+"/{id}", methods{http.MethodGet: s.getSystem, http.MethodPatch: s.patchSystem})
	mux.Handle(systemsPath+"/{id}/Actions/ComputerSystem.Reset", methods{http.MethodPost: s.reset})
	mux.Handle(systemsPath+"/{id}/SecureBoot", methods{http.MethodGet: s.getSecureBoot, http.MethodPatch: s.patchSecureBoot})
	s.inventoryRoutes(get)
	s.storageRoutes(mux)

	get(managersPath, s.listManagers)
	get(managersPath+"/{mid}", s.getManager)
	owners := []string{managersPath + "/{mid}"}
	if s.opts.SystemVirtualMedia {
		owners = append(owners, systemsPath+"/{id}")
	}
	for _, o := range owners {
		get(o+"/VirtualMedia", s.listMedia)
		mux.Handle(o+"/VirtualMedia/{slot}", methods{http.MethodGet: s.getMedia, http.MethodPatch: s.patchMedia})
		mux.Handle(o+"/VirtualMedia/{slot}/Actions/"+insertAction, methods{http.MethodPost: s.insertMedia})
		mux.Handle(o+"/VirtualMedia/{slot}/Actions/"+ejectAction, methods{http.MethodPost: s.ejectMedia})
	}

	get(chassisPath, s.listChassis)
	mux.Handle(chassisPath+"/{id}", methods{http.MethodGet: s.getChassis, http.MethodPatch: s.patchChassis})
	get(chassisPath+"/{id}/Thermal", s.getThermal)
	get(chassisPath+"/{id}/Power", s.getPower)
	s.biosRoutes(mux)
	s.updateRoutes(mux)

	var h http.Handler = mux
	h = s.withTasks(h)
	h = s.withAuth(h)
	h = s.withQuirks(h)
	h = s.withFaults(h)
	h = s.withLog(h)
	return trimSlash(h)
}

// trimSlash serves "/x/" as "/x" (clients differ), except the root itself.
func trimSlash(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.Path; len(p) > 1 && p != rootPath && strings.HasSuffix(p, "/") {
			r2 := r.Clone(r.Context())
			r2.URL.Path = strings.TrimRight(p, "/")
			r2.URL.RawPath = ""
			r = r2
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Simulator) getRoot(w http.ResponseWriter, r *http.Request) {
	body := obj{
		"@odata.id":      rootPath,
		"@odata.type":    "#ServiceRoot.v1_15_0.ServiceRoot",
		"Id":             "RootService",
		"Name":           "Rivet Redfish Simulator",
		"RedfishVersion": "1.15.0",
		"UUID":           uuidFrom(s.opts.Seed, 0, uuidService),
		"Vendor":         "Rivet",
		"Product":        "rivet-sim",
		"Systems":        link(systemsPath),
		"Managers":       link(managersPath),
		"Chassis":        link(chassisPath),
		"SessionService": link(sessionServicePath),
		"AccountService": link(accountServicePath),
		"Registries":     link(registriesPath),
		"UpdateService":  link(updateServicePath),
		"TaskService":    link(taskServicePath),
		"Links":          obj{"Sessions": link(sessionsPath)},
	}
	if s.opts.Quirks.NoSessionService {
		delete(body, "SessionService")
		body["Links"] = obj{}
	}
	writeJSON(w, http.StatusOK, body)
}

// withLog writes one debug line per request: method, path, status, time.
// Headers are never logged, so neither passwords nor tokens can leak.
func (s *Simulator) withLog(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.opts.Logger.Enabled(r.Context(), slog.LevelDebug) {
			next.ServeHTTP(w, r)
			return
		}
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rec, r)
		s.opts.Logger.Debug("redfish request", "method", r.Method, "path", r.URL.Path,
			"status", rec.status, "duration", time.Since(start))
	})
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}
