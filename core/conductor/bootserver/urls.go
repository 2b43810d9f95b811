package bootserver

import (
	"fmt"
	"net/url"
	"strings"
)

// maxLen bounds a URL and kernel_append_params (the x86 kernel command
// line is 2048 bytes).
const maxLen = 2048

// cleanURL checks that v is an http(s) URL iPXE will take as one plain
// argument, and returns it without userinfo (scrubbed says there was
// some). Errors name the key and the reason, never the value, which may
// hold a password or a signed query.
func cleanURL(key string, v any) (clean string, scrubbed bool, err error) {
	bad := func(format string, args ...any) (string, bool, error) {
		return "", scrubbed, fmt.Errorf("%w: %s: "+format, append([]any{ErrUnsafeInstanceInfo, key}, args...)...)
	}
	raw, ok := v.(string)
	switch {
	case v == nil || ok && raw == "":
		return bad("missing")
	case !ok:
		return bad("not a string")
	case len(raw) > maxLen:
		return bad("longer than %d characters", maxLen)
	}
	for i := range len(raw) {
		if !urlByte(raw[i]) {
			return bad("%s at offset %d is not allowed in a URL", describeByte(raw[i]), i)
		}
	}
	u, err := url.Parse(raw)
	if err != nil || u.Opaque != "" { // err quotes the URL: not passed on
		return bad("not a URL")
	}
	if s := strings.ToLower(u.Scheme); s != "http" && s != "https" {
		return bad("not an http or https URL")
	}
	if u.Host == "" {
		return bad("URL has no host")
	}
	if u.User != nil {
		u.User, scrubbed = nil, true
	}
	clean = u.String()
	for i := range len(clean) { // url.String escapes, but never trust a re-encoding
		if !urlByte(clean[i]) {
			return bad("%s at offset %d is not allowed in a URL", describeByte(clean[i]), i)
		}
	}
	return clean, scrubbed, nil
}

// urlByte allows RFC 3986's unreserved and reserved characters and %,
// except # (a fragment is never sent; # starts an iPXE comment), $ (iPXE
// expands ${…}) and ' (quoting). Whitespace is excluded, so a URL is one
// iPXE argument and cannot form || && or a new line.
func urlByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("-._~:/?[]@!&()*+,;=%", c) >= 0
}

// paramByte allows printable ASCII and spaces in kernel_append_params,
// except what iPXE may interpret: $ (settings), # (comment), | & ;
// (command chaining), backslash and quotes.
func paramByte(c byte) bool {
	if c < ' ' || c > '~' {
		return false
	}
	return strings.IndexByte("$#|&;\\'\"`", c) < 0
}

// describeByte names a refused byte without echoing control characters.
func describeByte(c byte) string {
	switch {
	case c == '\n':
		return "a newline"
	case c == '\r':
		return "a carriage return"
	case c == '\t':
		return "a tab"
	case c == ' ':
		return "a space"
	case c < ' ' || c == 0x7f:
		return fmt.Sprintf("control character 0x%02x", c)
	case c > 0x7f:
		return "a non-ASCII byte (percent-encode it)"
	}
	return fmt.Sprintf("%q", rune(c))
}
