// Package keyring holds the credential keys that encrypt BMC credentials at
// rest, and seals and opens the envelopes the database stores.
//
// Rules:
//   - A key file has one key a line, "<key-id>:<base64 of 32 bytes>"; blank
//     lines and lines starting with # are ignored. The first key encrypts;
//     every key decrypts (old keys stay until `rivet dbsync rotate-key` has
//     re-encrypted everything with the first).
//   - An envelope is "rivet-enc:v1:<key-id>:<base64 of nonce+ciphertext>",
//     AES-256-GCM with a random 96-bit nonce and the "rivet-enc:v1:<key-id>"
//     prefix as additional data, so a key id cannot be swapped.
//   - Errors name the key file, line or key id, never a key or a plaintext.
package keyring
