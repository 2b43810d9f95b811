package sim

import (
	"encoding/json"
	"net/http"
	"net/url"
	"path"
)

// mediaSlots are the virtual media drives every manager has, in State order.
var mediaSlots = [...]struct {
	id, name string
	types    []string
}{
	{"Cd", "Virtual CD", []string{"CD", "DVD"}},
	{"Floppy", "Virtual Removable Media", []string{"Floppy", "USBStick"}},
}

const (
	insertAction = "VirtualMedia.InsertMedia"
	ejectAction  = "VirtualMedia.EjectMedia"
)

// mediaParams are the InsertMedia parameters (and PATCH properties) taken;
// the transfer and credential ones are accepted and ignored.
var mediaParams = map[string]bool{
	"Image": true, "Inserted": true, "WriteProtected": true, "MediaType": true,
	"TransferProtocolType": true, "TransferMethod": true, "UserName": true, "Password": true,
}

// mediaOwner resolves the manager ({mid}) or, with SystemVirtualMedia, the
// system ({id}) whose media a request addresses, and the collection path
// the request used, so each layout names its own resources.
func (s *Simulator) mediaOwner(w http.ResponseWriter, r *http.Request) (int, string, bool) {
	if r.PathValue("mid") != "" {
		i, ok := s.managerFor(w, r)
		return i, managerPath(i) + "/VirtualMedia", ok
	}
	i, ok := s.systemFor(w, r)
	return i, systemPath(i) + "/VirtualMedia", ok
}

// slotFor resolves the owner and {slot} or answers 404; it returns the
// slot's own path.
func (s *Simulator) slotFor(w http.ResponseWriter, r *http.Request) (int, int, string, bool) {
	i, base, ok := s.mediaOwner(w, r)
	if !ok {
		return 0, 0, "", false
	}
	for k, sl := range mediaSlots {
		if sl.id == r.PathValue("slot") {
			return i, k, base + "/" + sl.id, true
		}
	}
	writeError(w, errNotFound(r.URL.Path))
	return 0, 0, "", false
}

func (s *Simulator) listMedia(w http.ResponseWriter, r *http.Request) {
	_, base, ok := s.mediaOwner(w, r)
	if !ok {
		return
	}
	members := make([]string, len(mediaSlots))
	for k, sl := range mediaSlots {
		members[k] = base + "/" + sl.id
	}
	writeJSON(w, http.StatusOK, collection(base,
		"#VirtualMediaCollection.VirtualMediaCollection", "Virtual Media Services", members))
}

func (s *Simulator) getMedia(w http.ResponseWriter, r *http.Request) {
	i, k, p, ok := s.slotFor(w, r)
	if !ok {
		return
	}
	sys := &s.systems[i]
	sys.mu.Lock()
	m := sys.media[k]
	sys.mu.Unlock()
	body := obj{
		"@odata.id":      p,
		"@odata.type":    "#VirtualMedia.v1_6_0.VirtualMedia",
		"Id":             mediaSlots[k].id,
		"Name":           mediaSlots[k].name,
		"MediaTypes":     mediaSlots[k].types,
		"Image":          nil,
		"ImageName":      nil,
		"Inserted":       m.inserted,
		"WriteProtected": m.writeProtected,
		"ConnectedVia":   "NotConnected",
		"Actions": obj{
			"#" + insertAction: obj{"target": p + "/Actions/" + insertAction},
			"#" + ejectAction:  obj{"target": p + "/Actions/" + ejectAction},
		},
	}
	if s.opts.Quirks.NoMediaActions {
		delete(body, "Actions")
	}
	if m.image != "" {
		body["Image"], body["ImageName"], body["ConnectedVia"] = m.image, path.Base(m.image), "URI"
	}
	writeResource(w, m.etag(), body)
}

// mediaRequest is a validated InsertMedia body or PATCH.
type mediaRequest struct {
	image          *string // nil: not given; "": null or empty (eject)
	inserted       *bool
	writeProtected *bool
}

// parseMedia validates body; action names the action for error messages, ""
// for a PATCH.
func parseMedia(body map[string]json.RawMessage, action string) (mediaRequest, *apiError) {
	var req mediaRequest
	var errs []*apiError
	unknown, badType, badFormat := errPropertyUnknown, errPropertyType, errPropertyFormat
	if action != "" {
		unknown = func(n string) *apiError { return errParamUnknown(action, n) }
		badType = func(n, v string) *apiError { return errParamFormat(action, n, v) }
		badFormat = badType
	}
	for _, name := range sortedKeys(body) {
		raw := body[name]
		switch name {
		case "Image":
			v, null, ok := stringValue(raw)
			switch {
			case !ok:
				errs = append(errs, badType(name, string(raw)))
			case !null && v != "" && !validImage(v):
				errs = append(errs, badFormat(name, v))
			case action != "" && (null || v == ""):
				errs = append(errs, errParamMissing(action, name))
			default:
				req.image = &v
			}
		case "Inserted", "WriteProtected":
			v, ok := boolValue(raw)
			if !ok {
				errs = append(errs, badType(name, string(raw)))
			} else if name == "Inserted" {
				req.inserted = &v
			} else {
				req.writeProtected = &v
			}
		default:
			if !mediaParams[name] {
				errs = append(errs, unknown(name))
			}
		}
	}
	if _, ok := body["Image"]; action != "" && !ok {
		errs = append(errs, errParamMissing(action, "Image"))
	}
	if len(errs) > 0 {
		return req, join(errs)
	}
	return req, nil
}

// validImage accepts absolute http and https URLs: what a BMC can fetch.
func validImage(v string) bool {
	u, err := url.Parse(v)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

func (s *Simulator) insertMedia(w http.ResponseWriter, r *http.Request) {
	s.changeMedia(w, r, insertAction)
}

func (s *Simulator) ejectMedia(w http.ResponseWriter, r *http.Request) {
	s.changeMedia(w, r, ejectAction)
}

func (s *Simulator) patchMedia(w http.ResponseWriter, r *http.Request) {
	s.changeMedia(w, r, "")
}

// changeMedia is InsertMedia, EjectMedia and the PATCH fallback some clients
// use (gofish when the actions are missing). Inserting into an occupied slot
// is 409 ResourceInUse: a client must eject first, as the spec asks.
func (s *Simulator) changeMedia(w http.ResponseWriter, r *http.Request, action string) {
	i, k, p, ok := s.slotFor(w, r)
	if !ok {
		return
	}
	body, aerr := readObject(r)
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	var req mediaRequest
	var perr *apiError
	switch {
	case action != ejectAction:
		req, perr = parseMedia(body, action)
	case len(body) > 0: // EjectMedia takes no parameters
		perr = errParamUnknown(action, sortedKeys(body)[0])
	}
	sys := &s.systems[i]
	sys.mu.Lock()
	m := &sys.media[k]
	switch { // the precondition first, as HTTP orders it
	case !ifMatch(r, m.etag()):
		aerr = errPrecondition(p)
	case perr != nil:
		aerr = perr
	default:
		aerr = m.apply(req, action == ejectAction, mediaSlots[k].id)
	}
	sys.mu.Unlock()
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// apply changes the slot; the caller holds the system's lock. An Image
// inserts, eject (or a null Image, or Inserted=false on a PATCH) empties the
// slot, and WriteProtected alone just sets that flag.
func (m *slot) apply(req mediaRequest, eject bool, slotID string) *apiError {
	insert := req.image != nil && *req.image != ""
	eject = eject || (!insert && (req.image != nil || (req.inserted != nil && !*req.inserted)))
	switch {
	case insert && m.image != "":
		return errConflict("ResourceInUse",
			"The change to the requested resource failed because the resource is in use: "+slotID+" already holds "+m.image+"; eject it first.")
	case insert:
		m.image, m.inserted, m.writeProtected = *req.image, true, true
		if req.inserted != nil {
			m.inserted = *req.inserted
		}
		if req.writeProtected != nil {
			m.writeProtected = *req.writeProtected
		}
	case eject:
		*m = slot{gen: m.gen}
	case req.writeProtected != nil:
		m.writeProtected = *req.writeProtected
	}
	m.gen++
	return nil
}
