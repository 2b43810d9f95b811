package bootserver

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
)

// Handler serves GET /ipxe/{ident}: the iPXE script of the node whose UUID
// or port MAC address is ident. Every answer is text/plain and uncached
// (a node's script changes with its provision state).
type Handler struct {
	src Source
	log *slog.Logger
	mux *http.ServeMux
}

// NewHandler returns a Handler reading nodes from src; log (nil discards)
// gets one line per script served or refused.
func NewHandler(src Source, log *slog.Logger) *Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	h := &Handler{src: src, log: log, mux: http.NewServeMux()}
	h.mux.HandleFunc("GET /ipxe/{ident}", h.serveScript)
	return h
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

func (h *Handler) serveScript(w http.ResponseWriter, r *http.Request) {
	ident := r.PathValue("ident")
	log := h.log.With("ident", ident, "remote", r.RemoteAddr)
	kind, key := parseIdent(ident)
	var (
		n   Node
		err error
	)
	switch kind {
	case identUUID:
		n, err = h.src.NodeByUUID(r.Context(), key)
	case identMAC:
		n, err = h.src.NodeByMAC(r.Context(), key)
	default:
		err = ErrNotFound
	}
	switch {
	case errors.Is(err, ErrNotFound):
		log.Debug("iPXE script requested for no known node")
		writeText(w, http.StatusNotFound, "rivet: no node has this UUID or port MAC address\n")
		return
	case err != nil:
		log.Error("iPXE script: node lookup failed", "error", err)
		writeText(w, http.StatusInternalServerError, "rivet: node lookup failed, see the conductor log\n")
		return
	}
	log = log.With("node", n.UUID, "provision_state", n.ProvisionState)
	s, err := Render(n)
	if err != nil {
		log.Warn("iPXE script refused: not rendering the node's deploy image", "error", err)
	} else {
		log.Info("iPXE script served", "boots", s.Kind)
	}
	if len(s.Scrubbed) > 0 {
		log.Warn("removed userinfo from instance_info URLs; give the image server other credentials", "keys", s.Scrubbed)
	}
	writeText(w, http.StatusOK, s.Body)
}

func writeText(w http.ResponseWriter, code int, body string) {
	hdr := w.Header()
	hdr.Set("Content-Type", "text/plain; charset=utf-8")
	hdr.Set("Cache-Control", "no-store")
	hdr.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = io.WriteString(w, body)
}
