package agentclient_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/conductor/agentclient"
	"github.com/rivetmetal/rivet/core/conductor/agentclient/agenttest"
)

func fastClient() *agentclient.Client {
	c := agentclient.New()
	c.PollInterval, c.CommandTimeout = 10*time.Millisecond, 5*time.Second
	return c
}

// An asynchronous command answers RUNNING, and Run polls GET
// /v1/commands/ until it ends: its result, or the agent's error as a
// *CommandError carrying command_error's details.
func TestRunPollsAsyncCommands(t *testing.T) {
	a := agenttest.New()
	a.Token = "tok-123"
	a.Delay = 50 * time.Millisecond
	a.Handle("deploy.execute_deploy_step", func(_ context.Context, p map[string]any) (map[string]any, error) {
		return map[string]any{"deploy_result": nil, "deploy_step": p["step"]}, nil
	})
	a.Handle("standby.prepare_image", func(context.Context, map[string]any) (map[string]any, error) {
		return nil, errors.New("Image failed to verify against checksum")
	})
	url := a.Start()
	defer a.Close()
	c := fastClient()
	tgt := agentclient.Target{Node: "n1", URL: url, Token: "tok-123"}
	ctx := context.Background()

	started, err := c.Execute(ctx, tgt, "deploy.execute_deploy_step", map[string]any{"step": map[string]any{"step": "write_image"}}, false)
	if err != nil || started.Status != agentclient.StatusRunning {
		t.Fatalf("execute: %+v %v", started, err)
	}
	var last *agentclient.Command
	for range 100 {
		if last, err = c.Last(ctx, tgt, "deploy.execute_deploy_step"); err != nil {
			t.Fatal(err)
		}
		if last != nil && last.Status != agentclient.StatusRunning {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if last == nil || last.Status != agentclient.StatusSucceeded || last.Result["deploy_step"] == nil {
		t.Fatalf("last command: %+v", last)
	}

	_, err = c.Run(ctx, tgt, "standby.prepare_image", nil)
	var ce *agentclient.CommandError
	if !errors.As(err, &ce) || ce.Message != "Image failed to verify against checksum" {
		t.Fatalf("failed command: %v", err)
	}
	if got, err := c.Run(ctx, tgt, "standby.sync", nil); err != nil || got.Status != agentclient.StatusSucceeded {
		t.Fatalf("sync: %+v %v", got, err)
	}
	if got := strings.Join(a.Received(), ","); got != "deploy.execute_deploy_step,standby.prepare_image,standby.sync" {
		t.Errorf("agent received %s", got)
	}
}

// A wrong token is the agent's 401, an *APIError that does not show the
// token; a busy agent is ErrBusy.
func TestTokenAndBusy(t *testing.T) {
	a := agenttest.New()
	a.Token = "right"
	a.Delay = 200 * time.Millisecond
	url := a.Start()
	defer a.Close()
	c := fastClient()
	ctx := context.Background()
	_, err := c.Execute(ctx, agentclient.Target{Node: "n1", URL: url, Token: "wrong-secret"}, "standby.sync", nil, false)
	var ae *agentclient.APIError
	if !errors.As(err, &ae) || ae.Status != 401 {
		t.Fatalf("wrong token: %v", err)
	}
	if strings.Contains(err.Error(), "wrong-secret") {
		t.Errorf("error shows the token: %v", err)
	}
	tgt := agentclient.Target{Node: "n1", URL: url, Token: "right"}
	if _, err := c.Execute(ctx, tgt, "clean.execute_clean_step", nil, false); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Execute(ctx, tgt, "standby.sync", nil, false); !errors.Is(err, agentclient.ErrBusy) {
		t.Fatalf("second command while busy: %v", err)
	}
}

// An agent that does not answer is retried MaxAttempts times, then
// ErrUnreachable, without the token in the error.
func TestUnreachableRetries(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	c := fastClient()
	c.MaxAttempts = 2
	start := time.Now()
	_, err = c.Execute(context.Background(), agentclient.Target{Node: "n1", URL: "http://" + addr, Token: "sekrit"}, "standby.sync", nil, true)
	if !errors.Is(err, agentclient.ErrUnreachable) || !strings.Contains(err.Error(), "2 attempts") {
		t.Fatalf("err = %v", err)
	}
	if strings.Contains(err.Error(), "sekrit") {
		t.Errorf("error shows the token: %v", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("retries took %v", time.Since(start))
	}
}

// An agent serving TLS with a self-signed certificate is verified with the
// certificate it sent as agent_verify_ca, and only with it.
func TestTLSWithAgentVerifyCA(t *testing.T) {
	a := agenttest.New()
	url, pemCert := a.StartTLS()
	defer a.Close()
	otherPEM := selfSigned(t)
	c := fastClient()
	c.MaxAttempts = 1
	ctx := context.Background()
	if got, err := c.Execute(ctx, agentclient.Target{Node: "n1", URL: url, VerifyCA: pemCert}, "standby.sync", nil, true); err != nil || got.Status != agentclient.StatusSucceeded {
		t.Fatalf("with its certificate: %+v %v", got, err)
	}
	if _, err := c.Execute(ctx, agentclient.Target{Node: "n1", URL: url, VerifyCA: otherPEM}, "standby.sync", nil, true); err == nil {
		t.Fatal("an agent was trusted with another agent's certificate")
	}
	if _, err := c.Execute(ctx, agentclient.Target{Node: "n1", URL: url}, "standby.sync", nil, true); err == nil {
		t.Fatal("a self-signed agent was trusted without agent_verify_ca")
	}
	if _, err := c.Execute(ctx, agentclient.Target{Node: "n1", URL: url, VerifyCA: "not a pem"}, "standby.sync", nil, true); err == nil || !strings.Contains(err.Error(), "PEM") {
		t.Fatalf("bad agent_verify_ca: %v", err)
	}
}

func TestCommandErrorText(t *testing.T) {
	for raw, want := range map[string]string{
		`{"details": "d", "message": "m"}`: "d",
		`{"message": "m"}`:                 "m",
		`"plain"`:                          "plain",
		`null`:                             "",
	} {
		c := agentclient.Command{Error: []byte(raw), Status: agentclient.StatusSucceeded}
		if got := c.ErrorText(); got != want {
			t.Errorf("%s: %q, want %q", raw, got, want)
		}
	}
}

// selfSigned is another self-signed certificate for 127.0.0.1 (httptest's
// TLS servers all share one).
func selfSigned(t *testing.T) string {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "other agent"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}
