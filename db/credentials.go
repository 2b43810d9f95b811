package db

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/rivetmetal/rivet/core/keyring"
	"github.com/rivetmetal/rivet/plugins/secretkey"
)

// credentialColumn is the node column whose secret values are encrypted at
// rest: driver_info, where BMC credentials live.
const credentialColumn = "driver_info"

// WithKeyring returns a copy of s that encrypts the secret values of node
// driver_info (secretkey.Is) with keys on every write and decrypts them on
// every read, so the database never holds a BMC password while the rest of
// Rivet sees plaintext. A nil keyring stores values as they are, but still
// refuses to read encrypted ones (naming their key id).
func (s *Store) WithKeyring(keys *keyring.Keyring) *Store {
	c := *s
	c.keys = keys
	return &c
}

// sealCredentials returns a copy of m whose secret values are envelopes.
// Each value is sealed as its JSON, so numbers and objects round-trip.
func sealCredentials(keys *keyring.Keyring, m map[string]any) (map[string]any, error) {
	if keys == nil || m == nil {
		return m, nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		switch {
		case v == nil:
			out[k] = nil
		case secretkey.Is(k):
			plain, err := json.Marshal(v)
			if err != nil {
				return nil, fmt.Errorf("%s %s: encode: %w", credentialColumn, k, err)
			}
			env, err := keys.Seal(plain)
			if err != nil {
				return nil, err
			}
			out[k] = env
		default:
			sealed, err := sealNested(keys, v)
			if err != nil {
				return nil, err
			}
			out[k] = sealed
		}
	}
	return out, nil
}

func sealNested(keys *keyring.Keyring, v any) (any, error) {
	switch t := v.(type) {
	case map[string]any:
		return sealCredentials(keys, t)
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			s, err := sealNested(keys, e)
			if err != nil {
				return nil, err
			}
			out[i] = s
		}
		return out, nil
	}
	return v, nil
}

// openCredentials returns a copy of m with every envelope under a secret
// key decrypted. An envelope whose key is not in keys is an error naming
// the key (never the value) that wraps *keyring.UnknownKeyError.
func openCredentials(keys *keyring.Keyring, m map[string]any) (map[string]any, error) {
	if m == nil {
		return nil, nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		s, isStr := v.(string)
		switch {
		case isStr && secretkey.Is(k) && keyring.IsEnvelope(s):
			plain, err := keys.Open(s)
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", credentialColumn, k, err)
			}
			dec := json.NewDecoder(bytes.NewReader(plain))
			dec.UseNumber()
			var val any
			if err := dec.Decode(&val); err != nil {
				return nil, fmt.Errorf("%s %s: %w", credentialColumn, k, keyring.ErrMalformed)
			}
			out[k] = val
		default:
			opened, err := openNested(keys, v)
			if err != nil {
				return nil, err
			}
			out[k] = opened
		}
	}
	return out, nil
}

func openNested(keys *keyring.Keyring, v any) (any, error) {
	switch t := v.(type) {
	case map[string]any:
		return openCredentials(keys, t)
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			o, err := openNested(keys, e)
			if err != nil {
				return nil, err
			}
			out[i] = o
		}
		return out, nil
	}
	return v, nil
}

// hasStaleCredentials reports whether m holds a secret value not sealed
// with keys' current key: plaintext, or an envelope of an older key.
func hasStaleCredentials(keys *keyring.Keyring, m map[string]any) bool {
	for k, v := range m {
		if v == nil {
			continue
		}
		if secretkey.Is(k) {
			s, ok := v.(string)
			if id, isEnv := keyring.KeyID(s); !ok || !isEnv || id != keys.Current() {
				return true
			}
			continue
		}
		if nestedStale(keys, v) {
			return true
		}
	}
	return false
}

func nestedStale(keys *keyring.Keyring, v any) bool {
	switch t := v.(type) {
	case map[string]any:
		return hasStaleCredentials(keys, t)
	case []any:
		for _, e := range t {
			if nestedStale(keys, e) {
				return true
			}
		}
	}
	return false
}

// IsUnknownKey reports whether err says a credential was encrypted with a
// key id that is not configured.
func IsUnknownKey(err error) bool {
	var uk *keyring.UnknownKeyError
	return errors.As(err, &uk)
}
