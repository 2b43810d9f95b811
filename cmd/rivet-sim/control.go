package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/rivetmetal/rivet/drivers/redfish/sim"
)

// faultDoc is a system's fault and request count as the control endpoint
// shows and takes them (requests is read-only).
type faultDoc struct {
	Latency   string `json:"latency"`
	Status500 bool   `json:"status_500"`
	Hang      bool   `json:"hang"`
	Requests  int64  `json:"requests"`
}

// controlHandler serves the fault-injection knob for tests driving the
// binary from outside: GET, PUT and DELETE /faults/{system}. It has no
// authentication, so it listens on loopback only.
func controlHandler(s *sim.Simulator) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /faults/{system}", func(w http.ResponseWriter, r *http.Request) {
		st, err := s.System(r.PathValue("system"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(faultDoc{Latency: st.Fault.Latency.String(), Status500: st.Fault.Status500,
			Hang: st.Fault.Hang, Requests: st.Requests})
	})
	mux.HandleFunc("PUT /faults/{system}", func(w http.ResponseWriter, r *http.Request) {
		var doc struct {
			Latency   string `json:"latency"`
			Status500 bool   `json:"status_500"`
			Hang      bool   `json:"hang"`
		}
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4096))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&doc); err != nil {
			http.Error(w, "body: "+err.Error(), http.StatusBadRequest)
			return
		}
		f := sim.Fault{Status500: doc.Status500, Hang: doc.Hang}
		if doc.Latency != "" {
			d, err := time.ParseDuration(doc.Latency)
			if err != nil || d < 0 {
				http.Error(w, fmt.Sprintf("latency %q: want a duration such as 2s", doc.Latency), http.StatusBadRequest)
				return
			}
			f.Latency = d
		}
		setFault(w, s, r.PathValue("system"), f)
	})
	mux.HandleFunc("DELETE /faults/{system}", func(w http.ResponseWriter, r *http.Request) {
		setFault(w, s, r.PathValue("system"), sim.Fault{})
	})
	return mux
}

func setFault(w http.ResponseWriter, s *sim.Simulator, id string, f sim.Fault) {
	if err := s.SetFault(id, f); err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// serveControl listens on addr, which must be a loopback address, and
// serves the control endpoint until ctx ends. It returns the bound address.
func serveControl(ctx context.Context, addr string, s *sim.Simulator) (string, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("--control-listen %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return "", fmt.Errorf("--control-listen %q: the control endpoint has no authentication; give a loopback address", addr)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return "", err
	}
	srv := &http.Server{Handler: controlHandler(s), ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	go func() {
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			_ = l.Close()
		}
	}()
	return l.Addr().String(), nil
}
