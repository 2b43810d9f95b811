package redact

import (
	"strings"

	"github.com/rivetmetal/rivet/plugins/secretkey"
)

// Text returns s with every credential it can recognise hidden:
//
//   - the userinfo of a URL anywhere in s ("scheme://user:pass@host" →
//     "scheme://***:***@host", "scheme://token@host" → "scheme://***@host"),
//     whatever the scheme, with IPv6 hosts, percent-encoded or raw '@' and
//     ':' in the password;
//   - the value of a key=value pair whose key names a secret, in free text
//     and in query strings ("?password=x&token=y" → "?password=***&token=***");
//   - the value of a quoted "key": "value" pair (JSON or Python dict text)
//     whose key names a secret, also with backslash-escaped quotes.
//
// The userinfo ends at the last '@' of the URL's word (up to whitespace, a
// quote, '<', '>' or '`') when that '@' is in the authority (which ends at
// the first '/', '?' or '#') or when a ':' comes before it: a password with
// an unencoded '/', '?', '#' or '@' is still hidden whole. When unsure it
// hides more, never less: "https://mirror:5000/img@sha256:…" and
// "http://u:p@h/a@b" lose their host too. Not masked: "user@host" without
// "://" (e-mail, ssh), a user name alone holding an unencoded '/'
// ("http://us/er@h"), a password holding whitespace or a quote, and secrets
// under keys that do not name one ("--pass x").
func Text(s string) string {
	return keyValues(urls(s))
}

// urls hides the userinfo of every URL in s.
func urls(s string) string {
	if !strings.Contains(s, "://") {
		return s
	}
	var b []byte // the masked text, allocated at the first userinfo
	last := 0    // s[:last] is in b (or, while b is nil, unchanged)
	for i := 0; i+3 <= len(s); {
		j := strings.Index(s[i:], "://")
		if j < 0 {
			break
		}
		i += j + 3
		start, end, ok := userinfo(s, i)
		if ok {
			if b == nil {
				b = make([]byte, 0, len(s)+8)
			}
			b = append(append(b, s[last:start]...), hiddenUserinfo(s[start:end])...)
			last = end
		}
		i = end // linear: no "://" before end can start a userinfo
	}
	if b == nil {
		return s
	}
	return string(append(b, s[last:]...))
}

// keyValues hides the value of every secret key=value or quoted
// "key": value pair in s.
func keyValues(s string) string {
	if strings.IndexByte(s, '=') < 0 && (strings.IndexByte(s, ':') < 0 || !strings.ContainsAny(s, `"'`)) {
		return s
	}
	var b []byte
	last := 0
	for i := 0; i < len(s); i++ {
		if s[i] != '=' && s[i] != ':' {
			continue
		}
		if start, end, ok := secretValue(s, last, i); ok {
			if b == nil {
				b = make([]byte, 0, len(s)+8)
			}
			b = append(append(b, s[last:start]...), Hidden...)
			last, i = end, end-1
		}
	}
	if b == nil {
		return s
	}
	return string(append(b, s[last:]...))
}

// hiddenUserinfo is what replaces a URL's userinfo u: a user name and
// password both hide (a user name is half a credential, and a userinfo
// without ':' is often a token).
func hiddenUserinfo(u string) string {
	if strings.IndexByte(u, ':') >= 0 {
		return Hidden + ":" + Hidden
	}
	return Hidden
}

// userinfo returns the span [start, end) of the userinfo of the URL whose
// authority starts at s[start:], end being the index of its '@'. Without
// one, end is where the URL's word ends: no "://" before it starts a
// userinfo either (its '@' would be this URL's, with a ':' before it).
func userinfo(s string, start int) (int, int, bool) {
	word := start
	for word < len(s) && !endsWord(s[word]) {
		word++
	}
	auth := start
	for auth < word && s[auth] != '/' && s[auth] != '?' && s[auth] != '#' {
		auth++
	}
	last := strings.LastIndexByte(s[start:word], '@')
	switch {
	case last > 0 && start+last < auth:
		return start, start + last, true
	case last > 0 && strings.IndexByte(s[start:start+last], ':') >= 0:
		return start, start + last, true // a password cut the authority short
	}
	if at := strings.LastIndexByte(s[start:auth], '@'); at > 0 { // at 0, "scheme://@host" hides nothing
		return start, start + at, true
	}
	return start, word, false
}

// endsWord reports whether c cannot be part of a URL written in text.
func endsWord(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '\v', '\f', '"', '\'', '`', '<', '>':
		return true
	}
	return false
}

func isQuote(c byte) bool { return c == '"' || c == '\'' }

// isKeyChar reports whether c may be part of an unquoted key (key=value).
func isKeyChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
}

// secretValue returns the span [start, end) of the value after the
// separator s[sep] ('=' or ':') when the key before it, not reaching back
// before floor, names a secret. A ':' counts only after a quoted key.
func secretValue(s string, floor, sep int) (int, int, bool) {
	k := sep
	for k > floor && s[k-1] == ' ' {
		k--
	}
	var key string
	switch {
	case k > floor && isQuote(s[k-1]):
		q := s[k-1]
		open := strings.LastIndexByte(s[floor:k-1], q)
		if open < 0 {
			return 0, 0, false
		}
		key = strings.Trim(s[floor+open+1:k-1], `\`)
		if strings.IndexFunc(key, func(r rune) bool { return r > 0x7f || !isKeyChar(byte(r)) }) >= 0 {
			return 0, 0, false // a quoted phrase, not a key
		}
	case s[sep] == '=':
		j := k
		for j > floor && isKeyChar(s[j-1]) {
			j--
		}
		key = s[j:k]
	}
	if key == "" || !secretkey.Is(key) {
		return 0, 0, false
	}
	v := sep + 1
	for v < len(s) && s[v] == ' ' {
		v++
	}
	var start, end int
	switch {
	case v < len(s) && isQuote(s[v]):
		start = v + 1
		end = closing(s, start, s[v:v+1])
	case v+1 < len(s) && s[v] == '\\' && isQuote(s[v+1]):
		start = v + 2
		end = closing(s, start, s[v:v+2])
	default:
		start, end = v, v
		for end < len(s) && !endsValue(s[end], s[sep]) {
			end++
		}
	}
	if end == start {
		return 0, 0, false
	}
	return start, end, true
}

// closing returns the index of the quote that closes a value starting at
// s[start:], or len(s) when it is never closed (the rest is hidden).
func closing(s string, start int, quote string) int {
	if i := strings.Index(s[start:], quote); i >= 0 {
		return start + i
	}
	return len(s)
}

// endsValue reports whether c ends an unquoted value after sep.
func endsValue(c, sep byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '\v', '\f', '"', '\'', '&':
		return true
	case ',', '}':
		return sep == ':'
	}
	return false
}
