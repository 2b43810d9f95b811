package plugins

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/rivetmetal/rivet/plugins/internal/proto/driverv1"
)

// The direct channel carries a few unary calls beside gRPC, host to plugin,
// with fewer hand-offs between threads: each call has a connection of its
// own for its duration, the calling goroutine writes the request and reads
// the answer itself, and the plugin's goroutine that reads the request runs
// the handler and writes the answer. A gRPC call passes through a writer
// goroutine on each side and a new handler goroutine in the plugin; on an
// idle machine each hand-off wakes a sleeping thread, which is most of a
// gRPC call's cost on a VM (docs/performance.md, "Plugin call overhead").
//
// Negotiation: after Configure the host calls Driver/OpenDirect over the
// AutoMTLS gRPC connection with a fresh client certificate and the methods
// it wants to send; the plugin answers with its Unix socket, its own fresh
// certificate and the methods it serves there. A plugin built before the
// channel answers Unimplemented and every call stays on gRPC. Each side
// accepts exactly the certificate the other sent inside the authenticated
// gRPC connection (TLS 1.3, no other trust), so only the conductor that
// started the plugin can call it, as with AutoMTLS.
//
// Framing, version 1, big-endian; one request then one answer at a time on
// a connection:
//
//	request:  uint32 n | uint16 method | uint64 timeout_ns | protobuf request   (n counts what follows it)
//	answer:   uint32 n | uint8 kind    | protobuf answer (kind 0) or google.rpc.Status (kind 1)
//
// method indexes OpenDirectResponse.methods; timeout_ns is the caller's
// remaining deadline (0: none), which the plugin's handler context gets,
// as gRPC's grpc-timeout header does. Messages are bounded like gRPC's
// default (directMaxMessage); a larger request goes over gRPC.
//
// Only calls that read are sent over it (directMethods): a call the host
// stops waiting for (its context ended) is abandoned, not cancelled in the
// plugin, which runs it to its deadline; and a call whose connection breaks
// before its answer is sent again over gRPC. Both are harmless for a read
// and would not be for an action, so actions keep gRPC's cancellation.

// directVersion is the framing version this SDK speaks.
const directVersion = 1

// directMaxMessage bounds a message on the direct channel, as gRPC's
// default receive limit bounds it on the gRPC connection.
const directMaxMessage = 4 << 20

const (
	directRequestHeader = 4 + 2 + 8
	directAnswerHeader  = 4 + 1
	answerOK            = 0
	answerStatus        = 1
	// directMaxOpen bounds the host's connections to one plugin; a call
	// beyond it goes over gRPC, which multiplexes.
	directMaxOpen = 128
	// directMaxIdle bounds the connections kept open between calls.
	directMaxIdle = 32
	// directRedialPause is how long calls stay on gRPC after a connection
	// to the channel could not be made.
	directRedialPause = 5 * time.Second
	// directHandshakeTimeout bounds a connection's TLS handshake.
	directHandshakeTimeout = 10 * time.Second
)

// directMethods are the calls a host sends over the direct channel.
var directMethods = []string{
	driverv1.Driver_GetPowerState_FullMethodName,
	driverv1.Driver_GetBootDevice_FullMethodName,
	driverv1.Driver_SupportedBootDevices_FullMethodName,
}

// router is the grpc.ClientConnInterface the generated Driver client calls:
// the direct channel for the methods it carries once opened, gRPC for the
// rest and whenever the channel cannot take a call.
type router struct {
	cc     grpc.ClientConnInterface
	direct atomic.Pointer[directClient]
	// address is the channel's socket once opened, kept after Close for
	// RemoveDirectSocket.
	address atomic.Pointer[string]
}

// Invoke implements grpc.ClientConnInterface.
func (r *router) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	if d := r.direct.Load(); d != nil {
		if err, handled := d.invoke(ctx, method, args, reply); handled {
			return err
		}
	}
	return r.cc.Invoke(ctx, method, args, reply, opts...)
}

// NewStream implements grpc.ClientConnInterface; streams are gRPC's.
func (r *router) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	return r.cc.NewStream(ctx, desc, method, opts...)
}

// OpenDirect asks the plugin for the direct channel and, when it offers
// one, sends the calls it carries over it from now on. It reports whether
// the channel is in use; a plugin built without it gives false and no
// error. An error leaves every call on gRPC, which keeps working.
func (c *Client) OpenDirect(ctx context.Context) (bool, error) {
	if c.router == nil || c.router.direct.Load() != nil {
		return c.router != nil, nil
	}
	cert, err := newDirectCert()
	if err != nil {
		return false, fmt.Errorf("direct channel: %w", err)
	}
	resp, err := c.rpc.OpenDirect(ctx, &driverv1.OpenDirectRequest{
		ClientCertificate: cert.Certificate[0], Methods: directMethods, Version: directVersion,
	})
	if status.Code(err) == codes.Unimplemented {
		return false, nil // a plugin from before the channel
	}
	if err != nil {
		return false, fmt.Errorf("direct channel: %w", fromStatus(err))
	}
	if len(resp.GetMethods()) == 0 {
		return false, nil // the plugin serves none of them there
	}
	d, err := newDirectClient(resp, cert)
	if err != nil {
		return false, fmt.Errorf("direct channel: %w", err)
	}
	// One connection now: a channel that cannot be reached is refused here
	// rather than discovered by the first call.
	dc, err := d.dial(ctx)
	if err != nil {
		return false, fmt.Errorf("direct channel: %w", err)
	}
	d.open = 1 // not shared yet
	d.put(dc)
	if !c.router.direct.CompareAndSwap(nil, d) {
		d.close()
		return true, nil
	}
	c.router.address.Store(&d.address)
	return true, nil
}

// Direct reports whether calls go over the direct channel.
func (c *Client) Direct() bool { return c.router != nil && c.router.direct.Load() != nil }

// Close closes the direct channel's connections; later calls use gRPC. The
// host calls it when it retires the plugin process.
func (c *Client) Close() {
	if c.router == nil {
		return
	}
	if d := c.router.direct.Swap(nil); d != nil {
		d.close()
	}
}

// RemoveDirectSocket removes the socket and the private directory of the
// channel, for a plugin process that exited without doing so (killed): call
// it only once the process is gone. Only a directory named as the SDK names
// them, holding nothing but the socket, is removed.
func (c *Client) RemoveDirectSocket() {
	if c.router == nil {
		return
	}
	addr := c.router.address.Load()
	if addr == nil {
		return
	}
	dir := filepath.Dir(*addr)
	if !strings.HasPrefix(filepath.Base(dir), directDirPrefix) || filepath.Base(*addr) != directSocketName {
		return
	}
	os.Remove(*addr)
	os.Remove(dir) // fails, harmlessly, unless empty
}

// directClient is the host's end of the channel: a pool of connections.
type directClient struct {
	address string
	tls     *tls.Config
	index   map[string]uint16

	mu     sync.Mutex
	idle   []*directConn
	open   int
	closed bool
	// pausedUntil (unix ns) keeps calls on gRPC after a failed dial.
	pausedUntil atomic.Int64
}

type directConn struct {
	conn     *tls.Conn
	buf      []byte
	deadline time.Time // the one last set on conn
	spoiled  bool      // must not be reused
}

func newDirectClient(resp *driverv1.OpenDirectResponse, cert tls.Certificate) (*directClient, error) {
	if resp.GetVersion() != directVersion {
		return nil, fmt.Errorf("plugin offers framing version %d, this host speaks %d", resp.GetVersion(), directVersion)
	}
	if resp.GetNetwork() != "unix" || resp.GetAddress() == "" {
		return nil, fmt.Errorf("plugin offers %q address %q, want a unix socket", resp.GetNetwork(), resp.GetAddress())
	}
	want := map[string]bool{}
	for _, m := range directMethods {
		want[m] = true
	}
	if len(resp.GetMethods()) > len(directMethods) {
		return nil, fmt.Errorf("plugin lists %d methods, %d were asked for", len(resp.GetMethods()), len(directMethods))
	}
	index := make(map[string]uint16, len(resp.GetMethods()))
	for i, m := range resp.GetMethods() {
		if !want[m] {
			return nil, fmt.Errorf("plugin offers method %q, which was not asked for", m)
		}
		index[m] = uint16(i)
	}
	pin := resp.GetServerCertificate()
	if _, err := x509.ParseCertificate(pin); err != nil {
		return nil, fmt.Errorf("plugin's certificate: %w", err)
	}
	return &directClient{
		address: resp.GetAddress(),
		index:   index,
		tls: &tls.Config{
			MinVersion:   tls.VersionTLS13,
			Certificates: []tls.Certificate{cert},
			// The plugin is authenticated by pinning the exact certificate it
			// sent over the AutoMTLS connection (VerifyPeerCertificate); there
			// is no CA and no name to verify.
			InsecureSkipVerify:    true, //nolint:gosec // pinned below
			VerifyPeerCertificate: pinned(pin),
		},
	}, nil
}

// pinned accepts exactly the DER certificate der.
func pinned(der []byte) func([][]byte, [][]*x509.Certificate) error {
	return func(raw [][]byte, _ [][]*x509.Certificate) error {
		if len(raw) == 1 && string(raw[0]) == string(der) {
			return nil
		}
		return errors.New("direct channel: peer certificate is not the one exchanged over the plugin connection")
	}
}

// invoke sends one call over the channel. handled is false when the call
// should go over gRPC instead: a method the channel does not carry, no
// connection to be had, an oversized request, or a connection that broke
// before the answer (the call is a read: sending it again is harmless).
func (d *directClient) invoke(ctx context.Context, method string, args, reply any) (err error, handled bool) {
	idx, ok := d.index[method]
	if !ok {
		return nil, false
	}
	req, ok1 := args.(proto.Message)
	out, ok2 := reply.(proto.Message)
	if !ok1 || !ok2 {
		return nil, false
	}
	if err := ctx.Err(); err != nil {
		return status.FromContextError(err).Err(), true
	}
	dc := d.get(ctx)
	if dc == nil {
		return nil, false
	}
	st, err := dc.roundTrip(ctx, idx, req, out)
	if err == nil {
		if dc.spoiled {
			d.discard(dc)
		} else {
			d.put(dc)
		}
		if st != nil {
			return status.ErrorProto(st), true // the plugin's error
		}
		return nil, true
	}
	d.discard(dc)
	if cerr := ctx.Err(); cerr != nil {
		return status.FromContextError(cerr).Err(), true
	}
	return nil, false
}

// get returns an idle connection or dials one; nil sends the call to gRPC.
func (d *directClient) get(ctx context.Context) *directConn {
	if until := d.pausedUntil.Load(); until != 0 && time.Now().UnixNano() < until {
		return nil
	}
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil
	}
	if n := len(d.idle); n > 0 {
		dc := d.idle[n-1]
		d.idle[n-1] = nil
		d.idle = d.idle[:n-1]
		d.mu.Unlock()
		return dc
	}
	if d.open >= directMaxOpen {
		d.mu.Unlock()
		return nil
	}
	d.open++
	d.mu.Unlock()
	dc, err := d.dial(ctx)
	if err != nil {
		d.mu.Lock()
		d.open--
		d.mu.Unlock()
		if ctx.Err() == nil {
			d.pausedUntil.Store(time.Now().Add(directRedialPause).UnixNano())
		}
		return nil
	}
	return dc
}

// dial connects and completes the TLS handshake; the caller counts the
// connection in open.
func (d *directClient) dial(ctx context.Context) (*directConn, error) {
	hctx, cancel := context.WithTimeout(ctx, directHandshakeTimeout)
	defer cancel()
	var nd net.Dialer
	raw, err := nd.DialContext(hctx, "unix", d.address)
	if err != nil {
		return nil, err
	}
	conn := tls.Client(raw, d.tls)
	if err := conn.HandshakeContext(hctx); err != nil {
		raw.Close()
		return nil, err
	}
	return &directConn{conn: conn, buf: make([]byte, 0, 1024)}, nil
}

// put returns dc to the pool, or closes it when the pool is full or closed.
func (d *directClient) put(dc *directConn) {
	d.mu.Lock()
	if d.closed || len(d.idle) >= directMaxIdle {
		d.open--
		d.mu.Unlock()
		dc.conn.Close()
		return
	}
	d.idle = append(d.idle, dc)
	d.mu.Unlock()
}

// discard closes a connection that failed.
func (d *directClient) discard(dc *directConn) {
	d.mu.Lock()
	d.open--
	d.mu.Unlock()
	dc.conn.Close()
}

func (d *directClient) close() {
	d.mu.Lock()
	d.closed = true
	idle := d.idle
	d.idle = nil
	d.open -= len(idle)
	d.mu.Unlock()
	for _, dc := range idle {
		dc.conn.Close()
	}
}

// errTooLarge sends a request to gRPC, which reports it the way it
// reports any oversized message.
var errTooLarge = errors.New("direct channel: message too large")

// aLongTimeAgo is a deadline in the past: it unblocks a connection's I/O.
var aLongTimeAgo = time.Unix(1, 0)

// roundTrip writes one request and reads its answer. A non-nil status is
// the plugin's error; a non-nil error means the connection is unusable.
func (dc *directConn) roundTrip(ctx context.Context, method uint16, req, reply proto.Message) (*spb.Status, error) {
	buf := dc.buf[:directRequestHeader]
	binary.BigEndian.PutUint16(buf[4:], method)
	var timeout int64
	deadline, hasDeadline := ctx.Deadline()
	if hasDeadline {
		timeout = max(int64(time.Until(deadline)), 1)
	}
	binary.BigEndian.PutUint64(buf[6:], uint64(timeout))
	buf, err := proto.MarshalOptions{}.MarshalAppend(buf, req)
	if err != nil {
		return nil, err
	}
	if len(buf)-directRequestHeader > directMaxMessage {
		return nil, errTooLarge
	}
	binary.BigEndian.PutUint32(buf, uint32(len(buf)-4))
	dc.buf = buf[:0]

	if !deadline.Equal(dc.deadline) {
		if err := dc.conn.SetDeadline(deadline); err != nil {
			return nil, err
		}
		dc.deadline = deadline
	}
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, func() { dc.conn.SetDeadline(aLongTimeAgo) })
		defer func() {
			if !stop() {
				// The context ended during the call and its deadline may
				// still be landing: the connection cannot be reused.
				dc.spoiled = true
			}
		}()
	}
	if _, err := dc.conn.Write(buf); err != nil {
		return nil, err
	}
	body, kind, err := readAnswer(dc.conn, dc.buf)
	if err != nil {
		return nil, err
	}
	dc.buf = body[:0]
	switch kind {
	case answerOK:
		if err := proto.Unmarshal(body, reply); err != nil {
			return nil, err
		}
		return nil, nil
	case answerStatus:
		st := &spb.Status{}
		if err := proto.Unmarshal(body, st); err != nil {
			return nil, err
		}
		if codes.Code(st.GetCode()) == codes.OK {
			return nil, errors.New("direct channel: error answer with code OK")
		}
		return st, nil
	}
	return nil, fmt.Errorf("direct channel: answer of unknown kind %d", kind)
}

// readAnswer reads one answer into buf's storage and returns its body.
func readAnswer(conn net.Conn, buf []byte) ([]byte, byte, error) {
	var hdr [directAnswerHeader]byte
	if _, err := io.ReadFull(conn, hdr[:]); err != nil {
		return nil, 0, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n < 1 || n-1 > directMaxMessage {
		return nil, 0, fmt.Errorf("direct channel: answer of %d bytes", n)
	}
	body := grow(buf, int(n-1))
	if _, err := io.ReadFull(conn, body); err != nil {
		return nil, 0, err
	}
	return body, hdr[4], nil
}

// grow returns buf's storage resized to n bytes.
func grow(buf []byte, n int) []byte {
	if cap(buf) < n {
		return make([]byte, n)
	}
	return buf[:n]
}

// newDirectCert makes a fresh self-signed ECDSA P-256 certificate for one
// end of the channel. Nothing verifies its names or dates: the other end
// pins it byte for byte.
func newDirectCert() (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return tls.Certificate{}, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "rivet driver plugin direct channel"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.AddDate(10, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}
