package keyring

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// Prefix starts every envelope.
const Prefix = "rivet-enc:v1:"

// ErrMalformed says a value has the envelope prefix but not its form, or
// fails authentication (tampered, or sealed by another key of the same id).
var ErrMalformed = errors.New("keyring: malformed or tampered envelope")

// UnknownKeyError says an envelope was sealed with a key id that is not in
// the key file (or no key file is configured).
type UnknownKeyError struct {
	// KeyID is the envelope's key id.
	KeyID string
}

// Error names the key id and what to do.
func (e *UnknownKeyError) Error() string {
	return fmt.Sprintf("credential encrypted with key id %q, which is not in the credential key file; "+
		"add that key back (after the current one) to [DEFAULT] credential_key_file", e.KeyID)
}

// IsEnvelope reports whether s has the envelope prefix.
func IsEnvelope(s string) bool { return strings.HasPrefix(s, Prefix) }

// KeyID returns the key id of an envelope, and false when s is not one.
func KeyID(s string) (string, bool) {
	if !IsEnvelope(s) {
		return "", false
	}
	id, _, ok := strings.Cut(s[len(Prefix):], ":")
	return id, ok && checkKeyID(id) == nil
}

// Seal encrypts plaintext with the current key.
func (k *Keyring) Seal(plaintext []byte) (string, error) {
	aead := k.aeads[k.current]
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plaintext)+aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("keyring: nonce: %w", err)
	}
	header := Prefix + k.current
	sealed := aead.Seal(nonce, nonce, plaintext, []byte(header))
	return header + ":" + base64.StdEncoding.EncodeToString(sealed), nil
}

// Open decrypts an envelope. A key id not in the keyring (or a nil
// keyring) is an *UnknownKeyError; anything else wrong is ErrMalformed.
func (k *Keyring) Open(envelope string) ([]byte, error) {
	id, ok := KeyID(envelope)
	if !ok {
		return nil, ErrMalformed
	}
	if k == nil || k.aeads[id] == nil {
		return nil, &UnknownKeyError{KeyID: id}
	}
	aead := k.aeads[id]
	header := Prefix + id
	sealed, err := base64.StdEncoding.DecodeString(envelope[len(header)+1:])
	if err != nil || len(sealed) < aead.NonceSize()+aead.Overhead() {
		return nil, ErrMalformed
	}
	nonce, ct := sealed[:aead.NonceSize()], sealed[aead.NonceSize():]
	plain, err := aead.Open(nil, nonce, ct, []byte(header))
	if err != nil {
		return nil, ErrMalformed
	}
	return plain, nil
}
