package plugins

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/rivetmetal/rivet/plugins/internal/proto/driverv1"
)

// directServer is the plugin's end of the direct channel (direct.go): a
// Unix socket in a private directory, opened on the first OpenDirect, whose
// connections run the same handlers the gRPC server runs.
type directServer struct {
	plugin  string
	methods map[string]directMethod // every unary method registered

	mu      sync.Mutex
	ln      net.Listener
	dir     string
	cert    tls.Certificate
	clients map[string][]directMethod // client certificate (DER) → its method table
	conns   map[net.Conn]struct{}
	closed  bool
}

// directMethod is one unary method: the service value and the generated
// handler gRPC would call.
type directMethod struct {
	srv     any
	handler grpc.MethodHandler
}

func newDirectServer(plugin string) *directServer {
	return &directServer{plugin: plugin, methods: map[string]directMethod{}}
}

// register makes the unary methods of a service served with srv callable.
func (d *directServer) register(desc *grpc.ServiceDesc, srv any) {
	for _, m := range desc.Methods {
		d.methods["/"+desc.ServiceName+"/"+m.MethodName] = directMethod{srv: srv, handler: m.Handler}
	}
}

// The socket is <temp dir>/rivet-direct-<random>/s.
const (
	directDirPrefix  = "rivet-direct-"
	directSocketName = "s"
)

// maxDirectMethods bounds an OpenDirect request's method list.
const maxDirectMethods = 64

// open starts listening (once) and admits the client certificate der for
// the requested methods this plugin serves; it returns the address, this
// end's certificate and the methods granted, in table order.
func (d *directServer) open(der []byte, requested []string) (string, []byte, []string, error) {
	if _, err := x509.ParseCertificate(der); err != nil {
		return "", nil, nil, status.Errorf(codes.InvalidArgument, "direct channel: client certificate: %v", err)
	}
	if len(requested) > maxDirectMethods {
		return "", nil, nil, status.Errorf(codes.InvalidArgument, "direct channel: %d methods requested, at most %d", len(requested), maxDirectMethods)
	}
	var granted []string
	var table []directMethod
	seen := map[string]bool{}
	for _, name := range requested {
		if m, ok := d.methods[name]; ok && !seen[name] {
			seen[name] = true
			granted = append(granted, name)
			table = append(table, m)
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return "", nil, nil, status.Error(codes.Unavailable, "direct channel: plugin is stopping")
	}
	if d.ln == nil {
		if err := d.listenLocked(); err != nil {
			return "", nil, nil, status.Errorf(codes.Unavailable, "direct channel: %v", err)
		}
	}
	d.clients[string(der)] = table
	return d.ln.Addr().String(), d.cert.Certificate[0], granted, nil
}

func (d *directServer) listenLocked() error {
	cert, err := newDirectCert()
	if err != nil {
		return err
	}
	// MkdirTemp makes the directory 0700: only this user reaches the
	// socket, and only the host's certificate gets past the handshake.
	dir, err := os.MkdirTemp("", directDirPrefix)
	if err != nil {
		return err
	}
	ln, err := net.Listen("unix", filepath.Join(dir, directSocketName))
	if err != nil {
		os.RemoveAll(dir)
		return err
	}
	d.ln, d.dir, d.cert = ln, dir, cert
	d.clients = map[string][]directMethod{}
	d.conns = map[net.Conn]struct{}{}
	conf := &tls.Config{
		MinVersion:             tls.VersionTLS13,
		Certificates:           []tls.Certificate{cert},
		ClientAuth:             tls.RequireAnyClientCert,
		SessionTicketsDisabled: true,
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			if len(raw) == 1 && d.table(raw[0]) != nil {
				return nil
			}
			return errors.New("direct channel: client certificate was not exchanged over the plugin connection")
		},
	}
	go d.accept(ln, conf)
	return nil
}

// table returns the method table of a client certificate, nil if unknown.
func (d *directServer) table(der []byte) []directMethod {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.clients[string(der)]
}

func (d *directServer) accept(ln net.Listener, conf *tls.Config) {
	for {
		c, err := ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			return // closed
		}
		d.mu.Lock()
		if d.closed {
			d.mu.Unlock()
			c.Close()
			return
		}
		d.conns[c] = struct{}{}
		d.mu.Unlock()
		go d.serve(c, conf)
	}
}

// serve runs one connection's calls, one at a time, on this goroutine.
// Any protocol violation closes the connection.
func (d *directServer) serve(raw net.Conn, conf *tls.Config) {
	defer func() {
		d.mu.Lock()
		delete(d.conns, raw)
		d.mu.Unlock()
		raw.Close()
	}()
	conn := tls.Server(raw, conf)
	ctx, cancel := context.WithTimeout(context.Background(), directHandshakeTimeout)
	err := conn.HandshakeContext(ctx)
	cancel()
	if err != nil {
		return
	}
	table := d.table(conn.ConnectionState().PeerCertificates[0].Raw)
	var in, out []byte
	for {
		var hdr [directRequestHeader]byte
		if _, err := io.ReadFull(conn, hdr[:4]); err != nil {
			return
		}
		n := binary.BigEndian.Uint32(hdr[:4])
		if n < directRequestHeader-4 || n-(directRequestHeader-4) > directMaxMessage {
			return
		}
		in = grow(in, int(n))
		if _, err := io.ReadFull(conn, in); err != nil {
			return
		}
		idx := binary.BigEndian.Uint16(in)
		timeout := int64(binary.BigEndian.Uint64(in[2:]))
		if int(idx) >= len(table) || timeout < 0 {
			return
		}
		out = d.call(table[idx], timeout, in[directRequestHeader-4:], out[:0])
		if _, err := conn.Write(out); err != nil {
			return
		}
	}
}

// call runs one request and returns the answer frame appended to out.
func (d *directServer) call(m directMethod, timeout int64, body, out []byte) []byte {
	ctx, cancel := context.Background(), context.CancelFunc(func() {})
	if timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, time.Duration(timeout))
	}
	resp, err := m.handler(m.srv, ctx, func(v any) error {
		msg, ok := v.(proto.Message)
		if !ok {
			return status.Errorf(codes.Internal, "direct channel: %T is not a protobuf message", v)
		}
		if err := proto.Unmarshal(body, msg); err != nil {
			return status.Errorf(codes.Internal, "grpc: error unmarshalling request: %v", err)
		}
		return nil
	}, nil)
	cancel()
	out = append(out[:0], 0, 0, 0, 0, answerOK)
	if err == nil {
		msg, ok := resp.(proto.Message)
		if !ok {
			err = status.Errorf(codes.Internal, "direct channel: answer %T is not a protobuf message", resp)
		} else if out, err = (proto.MarshalOptions{}).MarshalAppend(out, msg); err == nil && len(out)-directAnswerHeader > directMaxMessage {
			err = status.Errorf(codes.ResourceExhausted, "plugin %s: answer of %d bytes is larger than %d", d.plugin, len(out)-directAnswerHeader, directMaxMessage)
		}
	}
	if err != nil {
		out = append(out[:directAnswerHeader-1], answerStatus)
		var merr error
		if out, merr = (proto.MarshalOptions{}).MarshalAppend(out, status.Convert(err).Proto()); merr != nil {
			out = append(out[:directAnswerHeader-1], answerStatus)
			out, _ = proto.MarshalOptions{}.MarshalAppend(out, status.New(codes.Internal, "direct channel: error not encodable").Proto())
		}
	}
	binary.BigEndian.PutUint32(out, uint32(len(out)-4))
	return out
}

// close stops listening, closes every connection and removes the socket's
// directory.
func (d *directServer) close() {
	d.mu.Lock()
	d.closed = true
	ln, dir, conns := d.ln, d.dir, d.conns
	d.conns = nil
	d.mu.Unlock()
	if ln != nil {
		ln.Close()
		os.RemoveAll(dir)
	}
	for c := range conns {
		c.Close()
	}
}

// OpenDirect implements the Driver service's OpenDirect.
func (s *server) OpenDirect(_ context.Context, req *driverv1.OpenDirectRequest) (*driverv1.OpenDirectResponse, error) {
	if s.direct == nil {
		return nil, status.Error(codes.Unimplemented, "direct channel not served")
	}
	if req.GetVersion() < directVersion {
		return nil, status.Errorf(codes.InvalidArgument, "direct channel: framing version %d, this plugin speaks %d", req.GetVersion(), directVersion)
	}
	addr, cert, methods, err := s.direct.open(req.GetClientCertificate(), req.GetMethods())
	if err != nil {
		return nil, err
	}
	return &driverv1.OpenDirectResponse{Network: "unix", Address: addr, ServerCertificate: cert,
		Methods: methods, Version: directVersion}, nil
}
