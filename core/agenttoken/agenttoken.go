// Package agenttoken is the per-node secret a ramdisk agent proves itself
// with, as Ironic's agent token: issued once at lookup, kept in the node's
// driver_internal_info under Key, presented with every heartbeat, wiped
// when the operation that expected the agent ends or the conductor powers
// the node off or reboots it.
//
// Rules: a token is 256 random bits (crypto/rand) in URL-safe base64; it
// is compared only through SHA-256 digests in constant time; it never
// appears in an API answer (Key holds "token" and "secret", so every view
// of driver_internal_info masks it), a log line or an error. Between the
// REST API and the conductor a heartbeat carries the token's digest, not
// the token: only the lookup that issues it sends it over the RPC wire.
package agenttoken

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
)

// Key is the driver_internal_info key of the token (Ironic's).
const Key = "agent_secret_token"

// Masked is what lookup returns in place of a token issued before: a value
// no heartbeat can match, as Ironic answers.
const Masked = "******"

// New returns a fresh token: 32 bytes from crypto/rand, URL-safe base64
// without padding (43 characters), as Python's secrets.token_urlsafe().
func New() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand: Read panics on failure)
	return base64.RawURLEncoding.EncodeToString(b)
}

// Digest is the hex SHA-256 of token: what the REST API sends the
// conductor in place of the token a heartbeat presented.
func Digest(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// Stored returns the token in driver_internal_info, "" when there is none.
func Stored(dii map[string]any) string {
	s, _ := dii[Key].(string)
	return s
}

// Present reports whether driver_internal_info holds a token.
func Present(dii map[string]any) bool { return Stored(dii) != "" }

// Valid reports, in constant time, whether token is the one stored in
// driver_internal_info. No stored token matches nothing, nor does "".
func Valid(dii map[string]any, token string) bool {
	return ValidDigest(dii, Digest(token)) && token != ""
}

// ValidDigest reports, in constant time, whether digest is the digest of
// the token stored in driver_internal_info.
func ValidDigest(dii map[string]any, digest string) bool {
	stored := Stored(dii)
	if stored == "" || stored == Masked {
		// Still compare, so that "no token" answers as fast as a wrong one.
		_ = subtle.ConstantTimeCompare([]byte(Digest("")), []byte(digest))
		return false
	}
	return subtle.ConstantTimeCompare([]byte(Digest(stored)), []byte(digest)) == 1
}

// Wipe returns a copy of driver_internal_info without the token, the
// agent's callback URL and its TLS certificate (agent_verify_ca) (Ironic's
// wipe_token_and_url: the next agent announces itself afresh, with a new
// certificate), or dii itself when it holds none of them.
func Wipe(dii map[string]any) map[string]any {
	wiped := func(k string) bool { return k == Key || k == "agent_url" || k == "agent_verify_ca" }
	found := false
	for k := range dii {
		found = found || wiped(k)
	}
	if !found {
		return dii
	}
	out := make(map[string]any, len(dii))
	for k, v := range dii {
		if !wiped(k) {
			out[k] = v
		}
	}
	return out
}
