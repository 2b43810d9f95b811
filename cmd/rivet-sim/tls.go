package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	"net"
	"strings"
	"time"
)

// tlsFromFlags returns the TLS config the flags ask for (nil for plain http)
// and, for a generated certificate, its SHA-256 fingerprint for pinning.
func tlsFromFlags(certFile, keyFile string, selfSigned bool, listen string) (*tls.Config, string, error) {
	switch {
	case selfSigned && (certFile != "" || keyFile != ""):
		return nil, "", errors.New("--tls-self-signed excludes --tls-cert and --tls-key")
	case (certFile == "") != (keyFile == ""):
		return nil, "", errors.New("--tls-cert and --tls-key go together")
	case certFile != "":
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, "", fmt.Errorf("tls: %w", err)
		}
		return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, "", nil
	case selfSigned:
		cert, err := selfSignedCert(listen)
		if err != nil {
			return nil, "", fmt.Errorf("tls self-signed: %w", err)
		}
		sum := sha256.Sum256(cert.Certificate[0])
		return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, fmt.Sprintf("%X", sum), nil
	}
	return nil, "", nil
}

// selfSignedCert makes a one-year ECDSA certificate for localhost, the
// loopback addresses and the host in the listen address.
func selfSignedCert(listen string) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "rivet-sim"},
		NotBefore:    time.Now().Add(-time.Minute),
		NotAfter:     time.Now().AddDate(1, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	if host, _, err := net.SplitHostPort(listen); err == nil && host != "" {
		if ip := net.ParseIP(host); ip != nil && !ip.IsLoopback() && !ip.IsUnspecified() {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else if ip == nil && !strings.EqualFold(host, "localhost") {
			tmpl.DNSNames = append(tmpl.DNSNames, host)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}
