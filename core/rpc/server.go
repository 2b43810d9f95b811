package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/rivetmetal/rivet/core/jsonlimit"
	"github.com/rivetmetal/rivet/core/version"
)

// HandlerFunc serves one method. It returns a versioned object, plain data
// (JSON-encoded) or nil.
type HandlerFunc func(ctx context.Context, p Params) (any, error)

// MethodNotFoundError is a request for a method the server does not have
// (JSON-RPC -32601).
type MethodNotFoundError struct{ Method string }

func (e *MethodNotFoundError) Error() string { return "Method " + e.Method + " was not found" }

// Server dispatches requests to handlers after checking versions and
// arguments against the method table.
type Server struct {
	methods  *Methods
	codec    ObjectCodec
	log      *slog.Logger
	handlers map[string]HandlerFunc

	// casts tracks fire-and-forget work so shutdown can wait for it.
	casts    sync.WaitGroup
	castBase context.Context
	// observe, when set, is told how long each handled request took.
	observe Observer
}

// Observer is told about each request a Server handled: its method, the
// handler's time (for a cast, run in the background, too) and its error.
// It is called concurrently.
type Observer func(method string, d time.Duration, err error)

// SetObserver sets the server's Observer; call it before serving.
func (s *Server) SetObserver(o Observer) { s.observe = o }

// NewServer returns a server for the method table. castCtx is the parent of
// the contexts casts run under (a service's lifetime context).
func NewServer(methods *Methods, codec ObjectCodec, log *slog.Logger, castCtx context.Context) *Server {
	return &Server{methods: methods, codec: codec, log: log, handlers: map[string]HandlerFunc{}, castBase: castCtx}
}

// Handle registers h for method, which must be in the table.
func (s *Server) Handle(method string, h HandlerFunc) {
	if _, ok := s.methods.Lookup(method); !ok {
		panic(fmt.Sprintf("rpc: Handle(%q): not in the method table", method))
	}
	s.handlers[method] = h
}

// Version is the RPC API version the server implements.
func (s *Server) Version() version.Version { return s.methods.Version() }

// check validates req against the table and returns the handler and params.
func (s *Server) check(req *Request) (HandlerFunc, Params, error) {
	served := s.methods.Version()
	reqV, err := version.Parse(req.Version)
	if err != nil || !reqV.ServedBy(served) {
		return nil, Params{}, &UnsupportedVersionError{Method: req.Method, Requested: req.Version, Served: served}
	}
	m, ok := s.methods.Lookup(req.Method)
	h := s.handlers[req.Method]
	if !ok || h == nil {
		return nil, Params{}, &MethodNotFoundError{Method: req.Method}
	}
	if reqV.Less(m.Since) {
		return nil, Params{}, &UnsupportedVersionError{Method: req.Method, Requested: req.Version, Served: served}
	}
	for name := range req.Params {
		a, ok := m.Arg(name)
		if !ok {
			return nil, Params{}, &InvalidParamsError{Method: req.Method, Reason: fmt.Sprintf("unexpected argument %q", name)}
		}
		if since, val := a.valueSince(req.Params[name]); reqV.Less(since) {
			what := fmt.Sprintf("argument %q", name)
			if val != "" {
				what = fmt.Sprintf("argument %s=%q", name, val)
			}
			return nil, Params{}, &InvalidParamsError{Method: req.Method,
				Reason: fmt.Sprintf("%s needs RPC %s but the request is at %s", what, since, reqV)}
		}
	}
	for _, a := range m.Args {
		if _, ok := req.Params[a.Name]; a.Required && !ok {
			return nil, Params{}, &InvalidParamsError{Method: req.Method, Reason: "missing required argument " + a.Name}
		}
	}
	return h, Params{method: m, version: reqV, raw: req.Params, codec: s.codec}, nil
}

// Dispatch serves req and returns its encoded result. For a cast it returns
// as soon as the request is checked; the handler runs in the background.
func (s *Server) Dispatch(ctx context.Context, req *Request) (json.RawMessage, error) {
	h, p, err := s.check(req)
	if err != nil {
		return nil, err
	}
	ctx = WithUser(WithRequestID(ctx, req.RequestID), req.User)
	// The request's logger is built only to log something: nearly every
	// call logs nothing here.
	log := func() *slog.Logger {
		return s.log.With("rpc_method", req.Method, "rpc_version", req.Version, "request_id", req.RequestID)
	}
	if req.Cast {
		s.casts.Add(1)
		go func() {
			defer s.casts.Done()
			cctx := WithUser(WithRequestID(context.WithoutCancel(s.castBase), req.RequestID), req.User)
			start := time.Now()
			_, err := safeCall(cctx, h, p, log)
			if s.observe != nil {
				s.observe(req.Method, time.Since(start), err)
			}
			if err != nil {
				log().Warn("rpc cast failed", "error", err)
			}
		}()
		return nil, nil
	}
	start := time.Now()
	res, err := safeCall(ctx, h, p, log)
	if s.observe != nil {
		s.observe(req.Method, time.Since(start), err)
	}
	if err != nil {
		if _, _, _, known := errorToWire(err); !known {
			log().Error("rpc call failed with an unexpected error", "error", err)
		}
		return nil, err
	}
	if isNil(res) {
		return nil, nil
	}
	return encodeValue(s.codec, res)
}

// WaitCasts blocks until every cast started so far has finished or ctx ends.
func (s *Server) WaitCasts(ctx context.Context) error {
	done := make(chan struct{})
	go func() { s.casts.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Params gives a handler its arguments.
type Params struct {
	method  Method
	version version.Version
	raw     map[string]json.RawMessage
	codec   ObjectCodec
}

// Version is the RPC version the client sent; handlers use it to tolerate
// older requests.
func (p Params) Version() version.Version { return p.version }

// Has reports whether the client sent the argument.
func (p Params) Has(name string) bool { _, ok := p.raw[name]; return ok }

// Decode JSON-decodes a plain argument into v; an absent argument leaves v
// untouched and returns nil.
func (p Params) Decode(name string, v any) error {
	raw, ok := p.raw[name]
	if !ok {
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return &InvalidParamsError{Method: p.method.Name, Reason: fmt.Sprintf("argument %s: %s", name, argProblem(err))}
	}
	return nil
}

// String returns a string argument ("" when absent).
func (p Params) String(name string) (string, error) {
	var s string
	err := p.Decode(name, &s)
	return s, err
}

// Object hydrates an object argument at latest, keeping conversion changes
// (the server side of reference/ironic.md §2.1).
func (p Params) Object(name string) (any, error) {
	raw, ok := p.raw[name]
	if !ok || !p.codec.IsObject(raw) {
		return nil, &InvalidParamsError{Method: p.method.Name, Reason: "argument " + name + " is not an object"}
	}
	obj, err := p.codec.Decode(raw, true)
	if err != nil {
		return nil, &InvalidParamsError{Method: p.method.Name, Reason: fmt.Sprintf("argument %s: %s", name, argProblem(err))}
	}
	return obj, nil
}

// argProblem words why an argument did not decode: a JSON decoding error
// in plain words (jsonlimit.Describe), never a Go type; anything else (an
// object's unknown version, say) as it is.
func argProblem(err error) string {
	var (
		se *json.SyntaxError
		te *json.UnmarshalTypeError
	)
	if errors.As(err, &se) || errors.As(err, &te) || strings.Contains(err.Error(), "json: ") {
		return jsonlimit.Describe(err)
	}
	return err.Error()
}

// IsInvalidParams reports whether err is an arguments problem.
func IsInvalidParams(err error) bool {
	var e *InvalidParamsError
	return errors.As(err, &e)
}

// safeCall runs h and turns a panic into an internal error. A panic must
// not reach net/http: it would close the connection without an answer,
// which the JSON-RPC client treats as a call never read and resends
// (jsonrpc's markReplayable), and in a cast it would kill the conductor.
func safeCall(ctx context.Context, h HandlerFunc, p Params, log func() *slog.Logger) (res any, err error) {
	defer func() {
		if v := recover(); v != nil {
			log().Error("rpc handler panicked", "panic", v, "stack", string(debug.Stack()))
			res, err = nil, fmt.Errorf("rpc handler panicked: %v", v)
		}
	}()
	return h(ctx, p)
}
