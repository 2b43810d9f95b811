package api

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/rivetmetal/rivet/core/version"
)

// apiFunc is a resource handler; a returned error is written in Ironic's
// error body by serve.
type apiFunc func(w http.ResponseWriter, r *http.Request) error

// Microversions at which Rivet's resources and verbs appear (reference
// §8). Each has a test in versions_test.go.
var (
	v1_1  = version.Version{Major: 1, Minor: 1}
	v1_2  = version.Version{Major: 1, Minor: 2}
	v1_3  = version.Version{Major: 1, Minor: 3}
	v1_4  = version.Version{Major: 1, Minor: 4}
	v1_5  = version.Version{Major: 1, Minor: 5}
	v1_6  = version.Version{Major: 1, Minor: 6}
	v1_7  = version.Version{Major: 1, Minor: 7}
	v1_8  = version.Version{Major: 1, Minor: 8}
	v1_9  = version.Version{Major: 1, Minor: 9}
	v1_10 = version.Version{Major: 1, Minor: 10}
	v1_11 = version.Version{Major: 1, Minor: 11}
	v1_12 = version.Version{Major: 1, Minor: 12}
	v1_13 = version.Version{Major: 1, Minor: 13}
	v1_14 = version.Version{Major: 1, Minor: 14}
	v1_15 = version.Version{Major: 1, Minor: 15}
	v1_16 = version.Version{Major: 1, Minor: 16}
	v1_17 = version.Version{Major: 1, Minor: 17}
	v1_18 = version.Version{Major: 1, Minor: 18}
	v1_19 = version.Version{Major: 1, Minor: 19}
	v1_20 = version.Version{Major: 1, Minor: 20}
	v1_21 = version.Version{Major: 1, Minor: 21}
	v1_22 = version.Version{Major: 1, Minor: 22}
	v1_23 = version.Version{Major: 1, Minor: 23}
	v1_24 = version.Version{Major: 1, Minor: 24}
	v1_25 = version.Version{Major: 1, Minor: 25}
	v1_26 = version.Version{Major: 1, Minor: 26}
	v1_27 = version.Version{Major: 1, Minor: 27}
	v1_28 = version.Version{Major: 1, Minor: 28}
	v1_29 = version.Version{Major: 1, Minor: 29}
	v1_30 = version.Version{Major: 1, Minor: 30}
	v1_31 = version.Version{Major: 1, Minor: 31}
)

// StatusClientClosedRequest is the status recorded for a request whose
// client went away before the answer (nginx's 499).
const StatusClientClosedRequest = 499

// serve adapts an apiFunc: its error becomes Ironic's body with the error's
// status; an unexpected error is logged and answered 500 without details.
func (s *server) serve(fn apiFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err := s.authorizeRoute(r)
		if err == nil {
			err = fn(w, r)
		}
		if err != nil {
			s.writeError(w, r, err)
		}
	})
}

func (s *server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	if r.Context().Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		// The client went away and the handler stopped: no one reads the
		// answer, and it is no server error. 499 is nginx's code for it,
		// what access logs and metrics then show.
		s.Logger.DebugContext(r.Context(), "client closed the request", "request_id", RequestIDFrom(r.Context()),
			"method", r.Method, "path", r.URL.Path)
		WriteFault(w, StatusClientClosedRequest, "The client closed the request.")
		return
	}
	status, msg, known := statusOf(err)
	if !known {
		s.Logger.ErrorContext(r.Context(), "request failed", "request_id", RequestIDFrom(r.Context()),
			"method", r.Method, "path", r.URL.Path, "error", err)
	}
	WriteFault(w, status, msg)
}

// routes registers every resource on a stdlib mux.
func (s *server) routes() *http.ServeMux {
	mux, _ := s.routeTable()
	return mux
}

// routeTable is routes with the patterns it registers, in order, which
// TestRBACEveryRouteHasPolicy holds against the policy tables.
func (s *server) routeTable() (*http.ServeMux, []string) {
	mux := http.NewServeMux()
	var patterns []string
	h := func(pattern string, fn apiFunc) {
		patterns = append(patterns, pattern)
		mux.Handle(pattern, s.serve(fn))
	}

	v1 := s.rg.V1Handler(gatedCollection{"lookup", v1_22}, gatedCollection{"heartbeat", v1_22},
		gatedCollection{"portgroups", v1_23}, gatedCollection{"volume", v1_32},
		gatedCollection{"conductors", v1_49}, gatedCollection{"allocations", v1_52}, gatedCollection{"events", v1_54},
		gatedCollection{"deploy_templates", v1_55}, gatedCollection{"runbooks", v1_92}, gatedCollection{"inspection_rules", v1_96}, gatedCollection{"continue_inspection", verContinueInspection})
	mux.Handle("/v1/{$}", v1)
	patterns = append(patterns, "/v1/{$}")

	h("GET /v1/nodes", s.listNodes(false))
	h("GET /v1/nodes/detail", s.listNodes(true))
	h("POST /v1/nodes", s.createNode)
	h("GET /v1/nodes/{node}", s.getNode)
	h("PATCH /v1/nodes/{node}", s.patchNode)
	h("DELETE /v1/nodes/{node}", s.deleteNode)
	h("PUT /v1/nodes/{node}/maintenance", s.setMaintenance(true))
	h("DELETE /v1/nodes/{node}/maintenance", s.setMaintenance(false))
	h("GET /v1/nodes/{node}/states", s.getStates)
	h("PUT /v1/nodes/{node}/states/power", s.putPowerState)
	h("PUT /v1/nodes/{node}/states/provision", s.putProvisionState)
	h("PUT /v1/nodes/{node}/states/raid", s.putRAID)
	h("GET /v1/nodes/{node}/states/console", s.getConsole)
	h("PUT /v1/nodes/{node}/states/console", s.putConsole)
	h("GET /v1/nodes/{node}/management/boot_device", s.getBootDevice)
	h("PUT /v1/nodes/{node}/management/boot_device", s.putBootDevice)
	h("GET /v1/nodes/{node}/management/boot_device/supported", s.getSupportedBootDevices)
	h("PUT /v1/nodes/{node}/management/inject_nmi", s.injectNMI)
	s.routeManagement2(h)
	h("GET /v1/nodes/{node}/validate", s.validateNode)
	h("GET /v1/nodes/{node}/vendor_passthru/methods", s.vendorMethods)
	h("GET /v1/nodes/{node}/ports", s.listPorts(false, parentNode))
	h("GET /v1/nodes/{node}/ports/detail", s.listPorts(true, parentNode))
	h("GET /v1/nodes/{node}/portgroups", s.listPortgroups(false, true))
	h("GET /v1/nodes/{node}/portgroups/detail", s.listPortgroups(true, true))
	h("GET /v1/nodes/{node}/vifs", s.listVIFs)
	h("POST /v1/nodes/{node}/vifs", s.attachVIF)
	h("DELETE /v1/nodes/{node}/vifs/{vif}", s.detachVIF)
	h("GET /v1/nodes/{node}/children", s.listChildren)
	h("GET /v1/shards", s.listShards)
	h("GET /v1/nodes/{node}/history", s.listHistory)
	h("GET /v1/nodes/{node}/history/{event}", s.getHistoryEvent)
	h("GET /v1/nodes/{node}/bios", s.listBIOS)
	h("GET /v1/nodes/{node}/bios/{setting}", s.getBIOSSetting)
	h("GET /v1/nodes/{node}/firmware", s.listFirmware)

	h("GET /v1/ports", s.listPorts(false, parentNone))
	h("GET /v1/ports/detail", s.listPorts(true, parentNone))
	h("POST /v1/ports", s.createPort)
	h("GET /v1/ports/{port}", s.getPort)
	h("PATCH /v1/ports/{port}", s.patchPort)
	h("DELETE /v1/ports/{port}", s.deletePort)

	h("GET /v1/portgroups", s.listPortgroups(false, false))
	h("GET /v1/portgroups/detail", s.listPortgroups(true, false))
	h("POST /v1/portgroups", s.createPortgroup)
	h("GET /v1/portgroups/{pg}", s.getPortgroup)
	h("PATCH /v1/portgroups/{pg}", s.patchPortgroup)
	h("DELETE /v1/portgroups/{pg}", s.deletePortgroup)
	h("GET /v1/portgroups/{pg}/ports", s.listPorts(false, parentPortgroup))
	h("GET /v1/portgroups/{pg}/ports/detail", s.listPorts(true, parentPortgroup))

	h("GET /v1/chassis", s.listChassis(false))
	h("GET /v1/chassis/detail", s.listChassis(true))
	h("POST /v1/chassis", s.createChassis)
	h("GET /v1/chassis/{chassis}", s.getChassis)
	h("PATCH /v1/chassis/{chassis}", s.patchChassis)
	h("DELETE /v1/chassis/{chassis}", s.deleteChassis)
	h("GET /v1/chassis/{chassis}/nodes", s.listChassisNodes(false))
	h("GET /v1/chassis/{chassis}/nodes/detail", s.listChassisNodes(true))

	h("GET /v1/drivers", s.listDrivers)
	h("GET /v1/drivers/{driver}", s.getDriver)
	h("GET /v1/drivers/{driver}/properties", s.getDriverProperties)
	h("GET /v1/drivers/{driver}/raid/logical_disk_properties", s.getDriverRAIDProperties)

	s.volumeRoutes(h)
	s.stepRoutes(h) // node traits, deploy templates, runbooks
	s.inspectionRuleRoutes(h)
	h("GET /v1/allocations", s.listAllocations)
	h("POST /v1/allocations", s.createAllocation)
	h("GET /v1/allocations/{allocation}", s.getAllocation)
	h("PATCH /v1/allocations/{allocation}", s.patchAllocation)
	h("DELETE /v1/allocations/{allocation}", s.deleteAllocation)
	h("GET /v1/nodes/{node}/allocation", s.getNodeAllocation)
	h("DELETE /v1/nodes/{node}/allocation", s.deleteNodeAllocation)

	h("GET /v1/conductors", s.listConductors)
	h("GET /v1/conductors/{hostname}", s.getConductor)

	h("POST /v1/events", s.postEvents)

	h("GET /v1/lookup", s.lookup)
	h("POST /v1/heartbeat/{node}", s.heartbeat)
	h("POST /v1/continue_inspection", s.continueInspection)
	h("GET /v1/nodes/{node}/inventory", s.getInventory)
	return mux, patterns
}

// dispatch runs the mux, replacing its own 404 and 405 answers with
// Ironic-shaped bodies (the Allow header stays).
func dispatch(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.Path; len(p) > 1 && strings.HasSuffix(p, "/") && p != "/v1/" {
			r.URL.Path = strings.TrimSuffix(p, "/")
		}
		h, pattern := mux.Handler(r)
		if pattern != "" {
			setRoute(r, pattern)
			mux.ServeHTTP(w, r) // sets the path values
			return
		}
		rec := &statusOnly{header: w.Header()}
		h.ServeHTTP(rec, r)
		if rec.status == http.StatusMethodNotAllowed {
			setRoute(r, "405")
			writeRoutingError(w, http.StatusMethodNotAllowed, "The method "+r.Method+" is not allowed for this resource.")
			return
		}
		setRoute(r, "404")
		writeRoutingError(w, http.StatusNotFound, "The resource could not be found.")
	})
}

// statusOnly records the status the mux's fallback handler writes and
// drops its plain-text body.
type statusOnly struct {
	header http.Header
	status int
}

func (s *statusOnly) Header() http.Header         { return s.header }
func (s *statusOnly) Write(b []byte) (int, error) { return len(b), nil }
func (s *statusOnly) WriteHeader(code int) {
	s.status = code
	s.header.Del("Content-Type")
	s.header.Del("X-Content-Type-Options")
}
