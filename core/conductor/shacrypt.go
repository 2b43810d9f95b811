package conductor

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"fmt"
	"hash"
	"strings"
)

// The rescue password is sent to the agent hashed, as Ironic's
// hash_password does with crypt(3): SHA-crypt (Ulrich Drepper's
// "Unix crypt using SHA-256 and SHA-512", the $5$ and $6$ schemes of
// glibc), with a random 16-character salt and the default 5,000 rounds.
// The agent writes the hash into the rescue user's /etc/shadow entry, so
// the plain password never leaves the conductor for the agent. Ironic's
// [conductor] rescue_password_hash_algorithm chooses sha256 (its default)
// or sha512.

const cryptAlphabet = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// shaCryptRounds is crypt(3)'s default; a hash with the default leaves
// "rounds=" out.
const shaCryptRounds = 5000

// hashRescuePassword hashes password with algo ("sha256" or "sha512") and
// a random salt, in crypt(3)'s "$5$salt$hash" form.
func hashRescuePassword(password, algo string) (string, error) {
	raw := make([]byte, 16)
	if _, err := rand.Read(raw); err != nil {
		return "", err
	}
	salt := make([]byte, len(raw))
	for i, b := range raw {
		salt[i] = cryptAlphabet[int(b)%len(cryptAlphabet)]
	}
	return shaCrypt(password, string(salt), algo)
}

// shaCrypt computes SHA-crypt of password with salt (at most 16
// characters are used), as crypt(3).
func shaCrypt(password, salt, algo string) (string, error) {
	var newHash func() hash.Hash
	var id string
	var order [][3]int
	switch algo {
	case "sha256":
		newHash, id = sha256.New, "5"
		order = [][3]int{{0, 10, 20}, {21, 1, 11}, {12, 22, 2}, {3, 13, 23}, {24, 4, 14}, {15, 25, 5},
			{6, 16, 26}, {27, 7, 17}, {18, 28, 8}, {9, 19, 29}}
	case "sha512":
		newHash, id = sha512.New, "6"
		order = [][3]int{{0, 21, 42}, {22, 43, 1}, {44, 2, 23}, {3, 24, 45}, {25, 46, 4}, {47, 5, 26},
			{6, 27, 48}, {28, 49, 7}, {50, 8, 29}, {9, 30, 51}, {31, 52, 10}, {53, 11, 32}, {12, 33, 54},
			{34, 55, 13}, {56, 14, 35}, {15, 36, 57}, {37, 58, 16}, {59, 17, 38}, {18, 39, 60}, {40, 61, 19},
			{62, 20, 41}}
	default:
		return "", fmt.Errorf("rescue password hash algorithm %q: use sha256 or sha512", algo)
	}
	if len(salt) > 16 {
		salt = salt[:16]
	}
	p, s := []byte(password), []byte(salt)
	sum := func(parts ...[]byte) []byte {
		h := newHash()
		for _, part := range parts {
			h.Write(part)
		}
		return h.Sum(nil)
	}
	b := sum(p, s, p)
	size := len(b)
	a := newHash()
	a.Write(p)
	a.Write(s)
	for n := len(p); n > 0; n -= size {
		a.Write(b[:min(n, size)])
	}
	for n := len(p); n > 0; n >>= 1 {
		if n&1 == 1 {
			a.Write(b)
		} else {
			a.Write(p)
		}
	}
	digest := a.Sum(nil)
	dp := newHash()
	for range len(p) {
		dp.Write(p)
	}
	pSeq := repeatTo(dp.Sum(nil), len(p))
	ds := newHash()
	for range 16 + int(digest[0]) {
		ds.Write(s)
	}
	sSeq := repeatTo(ds.Sum(nil), len(s))
	for i := range shaCryptRounds {
		c := newHash()
		if i%2 == 1 {
			c.Write(pSeq)
		} else {
			c.Write(digest)
		}
		if i%3 != 0 {
			c.Write(sSeq)
		}
		if i%7 != 0 {
			c.Write(pSeq)
		}
		if i%2 == 1 {
			c.Write(digest)
		} else {
			c.Write(pSeq)
		}
		digest = c.Sum(nil)
	}
	var out strings.Builder
	out.WriteString("$" + id + "$" + salt + "$")
	enc := func(b2, b1, b0 byte, n int) {
		w := uint(b2)<<16 | uint(b1)<<8 | uint(b0)
		for range n {
			out.WriteByte(cryptAlphabet[w&0x3f])
			w >>= 6
		}
	}
	for _, g := range order {
		enc(digest[g[0]], digest[g[1]], digest[g[2]], 4)
	}
	if algo == "sha256" {
		enc(0, digest[31], digest[30], 3)
	} else {
		enc(0, 0, digest[63], 2)
	}
	return out.String(), nil
}

// repeatTo repeats d until it is n bytes long.
func repeatTo(d []byte, n int) []byte {
	out := make([]byte, 0, n)
	for len(out) < n {
		out = append(out, d[:min(len(d), n-len(out))]...)
	}
	return out
}
