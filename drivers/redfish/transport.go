package redfish

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"
)

// httpClient builds the one HTTP client of a BMC: every request bounded by
// timeout (gofish sets none), connections kept alive and at most budget of
// them, certificates verified as verifyCA says ("true", "false" or a CA
// bundle path). No proxy: BMC credentials go to the BMC only.
func httpClient(timeout time.Duration, budget int, verifyCA string) (*http.Client, error) {
	tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12}
	switch verifyCA {
	case "true":
	case "false":
		tlsCfg.InsecureSkipVerify = true //nolint:gosec // the operator asked for it per node
	default:
		pem, err := os.ReadFile(verifyCA)
		if err != nil {
			return nil, fmt.Errorf("read CA bundle: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("CA bundle %s holds no PEM certificate", verifyCA)
		}
		tlsCfg.RootCAs = pool
	}
	tr := &http.Transport{
		DialContext:           (&net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:       tlsCfg,
		TLSHandshakeTimeout:   timeout,
		ResponseHeaderTimeout: timeout,
		MaxConnsPerHost:       budget,
		MaxIdleConnsPerHost:   budget,
		IdleConnTimeout:       time.Minute,
		ForceAttemptHTTP2:     true,
	}
	return &http.Client{Transport: responseGuard{next: tr}, Timeout: timeout}, nil
}
