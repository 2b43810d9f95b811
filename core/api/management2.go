package api

import (
	"context"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/rpc"
	"github.com/rivetmetal/rivet/core/states"
	"github.com/rivetmetal/rivet/core/version"
	"github.com/rivetmetal/rivet/plugins"
)

// Management interface version 2 endpoints: indicators (1.63), setting the
// boot mode and secure boot (1.76), attaching and detaching virtual media
// (1.89) and listing it (1.93), as Ironic's IndicatorController,
// NodeStatesController.boot_mode/secure_boot and NodeVmediaController.

var (
	v1_63 = version.Version{Major: 1, Minor: 63} // indicators
	v1_76 = version.Version{Major: 1, Minor: 76} // set boot mode, secure boot
	v1_89 = version.Version{Major: 1, Minor: 89} // attach/detach virtual media
	v1_93 = version.Version{Major: 1, Minor: 93} // get virtual media
)

// Management2Conductor is what the management interface version 2
// endpoints ask of conductors (rpc.ConductorAPI's RPC 1.5 methods).
type Management2Conductor interface {
	ChangeNodeBootMode(ctx context.Context, n *objects.Node, mode string) error
	ChangeNodeSecureBoot(ctx context.Context, n *objects.Node, on bool) error
	GetSupportedIndicators(ctx context.Context, n *objects.Node) (map[string]map[string]rpc.IndicatorInfo, error)
	GetIndicatorState(ctx context.Context, n *objects.Node, component, indicator string) (string, error)
	SetIndicatorState(ctx context.Context, n *objects.Node, component, indicator, state string) error
	GetVirtualMedia(ctx context.Context, n *objects.Node) ([]rpc.VirtualMedia, error)
	AttachVirtualMedia(ctx context.Context, n *objects.Node, deviceType, imageURL, source string) error
	DetachVirtualMedia(ctx context.Context, n *objects.Node, deviceTypes []string) error
}

var _ Management2Conductor = rpc.ConductorAPI{}

// routeManagement2 registers the endpoints.
func (s *server) routeManagement2(h func(string, apiFunc)) {
	h("PUT /v1/nodes/{node}/states/boot_mode", s.putBootMode)
	h("PUT /v1/nodes/{node}/states/secure_boot", s.putSecureBoot)
	h("GET /v1/nodes/{node}/management/indicators", s.listIndicators)
	h("GET /v1/nodes/{node}/management/indicators/{indicator}", s.getIndicator)
	h("PUT /v1/nodes/{node}/management/indicators/{indicator}", s.putIndicator)
	h("GET /v1/nodes/{node}/vmedia", s.getVmedia)
	h("POST /v1/nodes/{node}/vmedia", s.attachVmedia)
	h("DELETE /v1/nodes/{node}/vmedia", s.detachVmedia)
}

// endpointSince is Ironic's NotFound for an endpoint newer than the request.
func endpointSince(r *http.Request, since version.Version) error {
	if VersionFrom(r.Context()).Less(since) {
		return errorf(http.StatusNotFound, "This endpoint is supported starting with the API version %s", since)
	}
	return nil
}

// notTransitioning is Ironic's Conflict (409) for a boot mode or secure
// boot change while the node is in a transient (unstable) state.
func notTransitioning(n *objects.Node) error {
	if st := states.State(n.ProvisionState); !states.IsStable(st) {
		return errorf(http.StatusConflict, "Node is in %s state. Since node is transitioning, the boot mode will not be set "+
			"as this may interfere with ongoing changes and result in erroneous modification. Try again later.", st)
	}
	return nil
}

// putBootMode serves PUT /v1/nodes/{node}/states/boot_mode {"target":
// "uefi"|"bios"} (1.76): 202, the conductor sets it in the background.
func (s *server) putBootMode(w http.ResponseWriter, r *http.Request) error {
	return s.putStateTarget(w, r, func(body object) (func(n *objects.Node) error, error) {
		target, _, err := body.str("target", true)
		if err != nil {
			return nil, err
		}
		if target == nil {
			return nil, errorf(http.StatusBadRequest, "Invalid input for field/attribute target. Value: 'None'. Mandatory field missing.")
		}
		if _, perr := plugins.ParseTargetBootMode(*target); perr != nil {
			return nil, errorf(http.StatusBadRequest, "Invalid boot mode %s requested for node. Allowed boot modes are: uefi, bios", *target)
		}
		return func(n *objects.Node) error { return s.Conductor.ChangeNodeBootMode(r.Context(), n, *target) }, nil
	})
}

// putSecureBoot serves PUT /v1/nodes/{node}/states/secure_boot {"target":
// true|false} (1.76): 202, as putBootMode.
func (s *server) putSecureBoot(w http.ResponseWriter, r *http.Request) error {
	return s.putStateTarget(w, r, func(body object) (func(n *objects.Node) error, error) {
		raw, present := body["target"]
		on, ok := pyBoolean(raw)
		if !present || !ok {
			v := "None"
			if present {
				v = string(raw)
			}
			return nil, errorf(http.StatusBadRequest, "Invalid secure_boot %s requested for node. Allowed secure_boot states are: True, False) ", v)
		}
		return func(n *objects.Node) error { return s.Conductor.ChangeNodeSecureBoot(r.Context(), n, on) }, nil
	})
}

// putStateTarget serves a PUT of a node's boot mode or secure boot (1.76,
// 404 below): the body may name only "target", which parse judges into the
// conductor call; a node in a transient state is 409; success is 202.
func (s *server) putStateTarget(w http.ResponseWriter, r *http.Request,
	parse func(body object) (change func(n *objects.Node) error, err error)) error {
	ident := r.PathValue("node")
	n, err := s.getNodeByIdent(r, ident)
	if err != nil {
		return err
	}
	if err := endpointSince(r, v1_76); err != nil {
		return err
	}
	body, err := readObject(r)
	if err != nil {
		return err
	}
	if err := body.only("target", "target"); err != nil {
		return err
	}
	change, err := parse(body)
	if err != nil {
		return err
	}
	if err := notTransitioning(n); err != nil {
		return err
	}
	if err := change(n); err != nil {
		return err
	}
	accepted(w, r, ident)
	return nil
}

// pyBoolean reads a JSON value as Ironic's args.boolean: true/false, or a
// string oslo's bool_from_string takes strictly ("true", "1", "on", "yes",
// "y", "t" and their negatives, any case).
func pyBoolean(raw []byte) (bool, bool) {
	switch v := strings.TrimSpace(string(raw)); v {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	s, _, err := object{"v": raw}.str("v", false)
	if err != nil || s == nil {
		return false, false
	}
	switch strings.ToLower(strings.TrimSpace(*s)) {
	case "1", "t", "true", "on", "y", "yes":
		return true, true
	case "0", "f", "false", "off", "n", "no":
		return false, true
	}
	return false, false
}

// indicatorAt splits Ironic's "name@component" indicator identifier.
func indicatorAt(ident string) (name, component string, err error) {
	i := strings.Index(ident, "@")
	if i < 0 {
		return "", "", errorf(http.StatusBadRequest, "Malformed indicator name \"%s\"", ident)
	}
	return ident[:i], ident[i+1:], nil
}

// indicatorNode loads the node of an indicators request; the resource
// appeared in 1.63 (404 below).
func (s *server) indicatorNode(r *http.Request, ident string) (*objects.Node, error) {
	n, err := s.getNodeByIdent(r, ident)
	if err != nil {
		return nil, err
	}
	if VersionFrom(r.Context()).Less(v1_63) {
		return nil, errorf(http.StatusNotFound, msgNotFound)
	}
	return n, nil
}

// indicatorTarget loads the node and splits the indicator of a request for
// one indicator (1.63).
func (s *server) indicatorTarget(r *http.Request) (n *objects.Node, name, component string, err error) {
	if n, err = s.indicatorNode(r, r.PathValue("node")); err != nil {
		return nil, "", "", err
	}
	if name, component, err = indicatorAt(r.PathValue("indicator")); err != nil {
		return nil, "", "", err
	}
	return n, name, component, nil
}

// indicatorView is one indicator as Ironic lists it.
type indicatorView struct {
	Name      string   `json:"name"`
	Component string   `json:"component"`
	Readonly  bool     `json:"readonly"`
	States    []string `json:"states"`
	Links     []link   `json:"links"`
}

// listIndicators serves GET .../management/indicators (1.63):
// {"indicators": [{"name": "led@system", "component", "readonly",
// "states", "links"}]}, components and names sorted.
func (s *server) listIndicators(w http.ResponseWriter, r *http.Request) error {
	ident := r.PathValue("node")
	n, err := s.indicatorNode(r, ident)
	if err != nil {
		return err
	}
	inds, err := s.Conductor.GetSupportedIndicators(r.Context(), n)
	if err != nil {
		return err
	}
	out := []indicatorView{}
	for _, component := range slices.Sorted(maps.Keys(inds)) {
		for _, name := range slices.Sorted(maps.Keys(inds[component])) {
			info := inds[component][name]
			states := info.States
			if states == nil {
				states = []string{}
			}
			unique := name + "@" + component
			out = append(out, indicatorView{Name: unique, Component: component, Readonly: info.Readonly, States: states,
				Links: resourceLinks(r, "nodes", ident+"/management/indicators/"+url.PathEscape(unique))})
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"indicators": out})
	return nil
}

// getIndicator serves GET .../management/indicators/{name@component}
// (1.63): {"state": "ON"|"OFF"|"BLINKING"|"UNKNOWN"}.
func (s *server) getIndicator(w http.ResponseWriter, r *http.Request) error {
	n, name, component, err := s.indicatorTarget(r)
	if err != nil {
		return err
	}
	st, err := s.Conductor.GetIndicatorState(r.Context(), n, component, name)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"state": st})
	return nil
}

// putIndicator serves PUT .../management/indicators/{name@component}
// {"state": "ON"|"OFF"|"BLINKING"} (1.63): 204.
func (s *server) putIndicator(w http.ResponseWriter, r *http.Request) error {
	n, name, component, err := s.indicatorTarget(r)
	if err != nil {
		return err
	}
	body, err := readObject(r)
	if err != nil {
		return err
	}
	if err := body.only("state", "state"); err != nil {
		return err
	}
	st, _, err := body.str("state", false)
	if err != nil {
		return err
	}
	if st == nil {
		return errorf(http.StatusBadRequest, "Invalid input for field/attribute state. Value: 'None'. Mandatory field missing.")
	}
	if _, perr := plugins.ParseTargetIndicatorState(*st); perr != nil {
		return errorf(http.StatusBadRequest, "Invalid indicator state %s (valid are ON, OFF, BLINKING).", *st)
	}
	if err := s.Conductor.SetIndicatorState(r.Context(), n, component, name, *st); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// vmediaNode loads the node of a vmedia request; the resource appeared in
// 1.89 (404 below, as Ironic's _lookup).
func (s *server) vmediaNode(r *http.Request) (*objects.Node, error) {
	if VersionFrom(r.Context()).Less(v1_89) {
		return nil, errorf(http.StatusNotFound, msgNotFound)
	}
	return s.getNodeByIdent(r, r.PathValue("node"))
}

// getVmedia serves GET /v1/nodes/{node}/vmedia (1.93): the list of slots,
// each {"media_types", "inserted", "image"} as Ironic's redfish driver.
func (s *server) getVmedia(w http.ResponseWriter, r *http.Request) error {
	n, err := s.vmediaNode(r)
	if err != nil {
		return err
	}
	if VersionFrom(r.Context()).Less(v1_93) {
		return errorf(http.StatusNotFound, msgNotFound)
	}
	media, err := s.Conductor.GetVirtualMedia(r.Context(), n)
	if err != nil {
		return err
	}
	out := make([]map[string]any, 0, len(media))
	for _, m := range media {
		types := m.MediaTypes
		if types == nil {
			types = []string{}
		}
		out = append(out, map[string]any{"media_types": types, "inserted": m.Inserted, "image": m.Image})
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// vmediaURLSchemes are the image URL schemes Ironic accepts
// (image_publisher.VMEDIA_SUPPORTED_URL_SCHEMES).
var vmediaURLSchemes = []string{"http", "https", "nfs", "cifs", "smb"}

// attachVmedia serves POST /v1/nodes/{node}/vmedia {"device_type",
// "image_url", "image_download_source"?} (1.89): 204; the conductor
// attaches in the background.
func (s *server) attachVmedia(w http.ResponseWriter, r *http.Request) error {
	n, err := s.vmediaNode(r)
	if err != nil {
		return err
	}
	body, err := readObject(r)
	if err != nil {
		return err
	}
	if err := body.only("vmedia", "device_type", "image_url", "image_download_source"); err != nil {
		return err
	}
	dev, _, err := body.str("device_type", false)
	if err != nil {
		return err
	}
	img, _, err := body.str("image_url", false)
	if err != nil {
		return err
	}
	if dev == nil {
		return errorf(http.StatusBadRequest, "Schema error for vmedia: 'device_type' is a required property")
	}
	if img == nil {
		return errorf(http.StatusBadRequest, "Schema error for vmedia: 'image_url' is a required property")
	}
	if _, perr := plugins.ParseVirtualMediaDevice(*dev); perr != nil {
		return errorf(http.StatusBadRequest, "Schema error for vmedia: '%s' is not one of ['disk', 'cdrom', 'floppy']", *dev)
	}
	source, _, err := body.str("image_download_source", false)
	if err != nil {
		return err
	}
	src := ""
	if source != nil {
		switch *source {
		case "http", "local", "swift":
			src = *source
		default:
			return errorf(http.StatusBadRequest, "Schema error for vmedia: '%s' is not one of ['http', 'local', 'swift']", *source)
		}
	}
	scheme := ""
	if u, perr := url.Parse(*img); perr == nil {
		scheme = strings.ToLower(u.Scheme)
	}
	if !contains(vmediaURLSchemes, scheme) {
		return errorf(http.StatusBadRequest, "Unsupported or missing URL scheme: %s", scheme)
	}
	if err := s.Conductor.AttachVirtualMedia(r.Context(), n, *dev, *img, src); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// detachVmedia serves DELETE /v1/nodes/{node}/vmedia[?device_types=a,b]
// (1.89): 204; the conductor ejects in the background.
func (s *server) detachVmedia(w http.ResponseWriter, r *http.Request) error {
	n, err := s.vmediaNode(r)
	if err != nil {
		return err
	}
	var devs, invalid []string
	for _, v := range r.URL.Query()["device_types"] {
		for _, d := range strings.Split(v, ",") {
			if d = strings.TrimSpace(d); d == "" {
				continue
			}
			if _, perr := plugins.ParseVirtualMediaDevice(d); perr != nil {
				invalid = append(invalid, d)
			}
			devs = append(devs, d)
		}
	}
	if len(invalid) > 0 {
		return errorf(http.StatusBadRequest, "Invalid device type(s) %s (valid are disk, cdrom, floppy)", strings.Join(invalid, ", "))
	}
	if err := s.Conductor.DetachVirtualMedia(r.Context(), n, devs); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
