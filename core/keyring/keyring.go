package keyring

import (
	"bufio"
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"strings"
)

// KeySize is the length of a credential key: AES-256.
const KeySize = 32

// maxKeyIDLen bounds a key id; it is stored in every envelope.
const maxKeyIDLen = 64

// ErrNoKeys says a key file holds no key.
var ErrNoKeys = errors.New("keyring: no key")

// Keyring is a parsed credential key file. It is safe for concurrent use.
type Keyring struct {
	current string
	aeads   map[string]cipher.AEAD
	ids     []string
}

// Load reads and parses the key file at path.
func Load(path string) (*Keyring, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("credential key file: %w", err)
	}
	k, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("credential key file %s: %w", path, err)
	}
	return k, nil
}

// Parse parses key file contents. Errors name the line, never its key.
func Parse(data []byte) (*Keyring, error) {
	k := &Keyring{aeads: map[string]cipher.AEAD{}}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		id, b64, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("line %d: want <key-id>:<base64 key>", n)
		}
		if err := checkKeyID(id); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		if _, dup := k.aeads[id]; dup {
			return nil, fmt.Errorf("line %d: key id %q appears twice", n, id)
		}
		key, err := base64.StdEncoding.DecodeString(b64)
		if err != nil || len(key) != KeySize {
			return nil, fmt.Errorf("line %d: key %q is not the base64 of %d bytes (make one with `head -c 32 /dev/urandom | base64`)", n, id, KeySize)
		}
		block, err := aes.NewCipher(key)
		if err != nil {
			return nil, fmt.Errorf("line %d: key %q: %w", n, id, err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("line %d: key %q: %w", n, id, err)
		}
		if k.current == "" {
			k.current = id
		}
		k.aeads[id] = aead
		k.ids = append(k.ids, id)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if k.current == "" {
		return nil, ErrNoKeys
	}
	return k, nil
}

// checkKeyID accepts letters, digits, '-', '_' and '.'; a key id is part
// of the envelope, whose fields ':' separates.
func checkKeyID(id string) error {
	if id == "" || len(id) > maxKeyIDLen {
		return fmt.Errorf("key id must have 1 to %d characters", maxKeyIDLen)
	}
	for _, r := range id {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '-' || r == '_' || r == '.') {
			return fmt.Errorf("key id %q: only letters, digits, '-', '_' and '.' are allowed", id)
		}
	}
	return nil
}

// Current returns the id of the key that encrypts (the file's first).
func (k *Keyring) Current() string { return k.current }

// IDs returns every key id, in file order.
func (k *Keyring) IDs() []string { return append([]string(nil), k.ids...) }
