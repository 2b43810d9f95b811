package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"math/big"
	"net/http"
	"regexp"
	"sort"
	"strings"

	"github.com/rivetmetal/rivet/core/httplimit"
	"github.com/rivetmetal/rivet/core/jsonlimit"
)

// readBody reads the request body within the size limit. Too large is 413.
func readBody(r *http.Request) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	data, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, &Error{Status: http.StatusRequestEntityTooLarge, Message: msgTooLarge}
		}
		if httplimit.IsTimeout(err) {
			return nil, errorf(http.StatusRequestTimeout, "The request body did not arrive in time ([api] body_timeout); "+
				"send it faster or raise the limit.")
		}
		return nil, errorf(http.StatusBadRequest, "Could not read the request body: the connection failed while it was sent.")
	}
	return data, nil
}

// decodeJSON decodes a whole JSON document into v, numbers as json.Number;
// malformed JSON, trailing data, nesting deeper than jsonlimit's default,
// a repeated key or invalid UTF-8 is 400.
func decodeJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return errorf(http.StatusBadRequest, "Invalid JSON body: %s", jsonProblem(err))
	}
	if dec.More() {
		return errorf(http.StatusBadRequest, "Invalid JSON body: unexpected data after the JSON document")
	}
	if err := jsonlimit.Check(data, jsonlimit.DefaultMaxDepth); err != nil {
		return errorf(http.StatusBadRequest, "Invalid JSON body: %s", jsonlimit.Describe(err))
	}
	return nil
}

// readJSON reads the request body (readBody) and decodes it whole into v
// (decodeJSON).
func readJSON(r *http.Request, v any) error {
	data, err := readBody(r)
	if err != nil {
		return err
	}
	return decodeJSON(data, v)
}

// jsonProblem words a decoding error in plain words (jsonlimit.Describe):
// never a Go type or the decoder's own text.
func jsonProblem(err error) string {
	if errors.Is(err, io.EOF) {
		return "the body is empty"
	}
	return jsonlimit.Describe(err)
}

// object is a decoded JSON object body, by attribute.
type object map[string]json.RawMessage

// readObject reads a body that must be a JSON object.
func readObject(r *http.Request) (object, error) {
	data, err := readBody(r)
	if err != nil {
		return nil, err
	}
	return decodeObject(data)
}

// decodeObject reads a body that must be a JSON object with encoding/json:
// a body jsonlimit accepts is decoded once, straight into its members;
// anything else is decoded as a whole for the 400's wording.
func decodeObject(data []byte) (object, error) {
	if jsonlimit.Check(data, jsonlimit.DefaultMaxDepth) == nil {
		var o object
		if json.Unmarshal(data, &o) == nil && o != nil {
			return o, nil
		}
	}
	var raw any
	if err := decodeJSON(data, &raw); err != nil {
		return nil, err
	}
	if _, ok := raw.(map[string]any); !ok {
		return nil, errorf(http.StatusBadRequest, "Invalid JSON body: expected an object")
	}
	var o object
	_ = json.Unmarshal(data, &o)
	if o == nil {
		o = object{}
	}
	return o, nil
}

// only rejects attributes outside allowed with wsme's message.
func (o object) only(arg string, allowed ...string) error {
	var unknown []string
	for k := range o {
		if !contains(allowed, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	return errorf(http.StatusBadRequest, "Unknown attribute for argument %s: %s", arg, strings.Join(unknown, ", "))
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// typeError is wsme's wrong-type message.
func typeError(attr string, raw json.RawMessage, want string) error {
	if attr == "driver_info" || attr == "instance_info" || isSecretKey(attr) {
		raw = json.RawMessage(Masked) // never echo what may hold a secret
	}
	return errorf(http.StatusBadRequest, "Invalid input for field/attribute %s. Value: '%s'. Wrong type. Expected '%s'.",
		attr, string(raw), want)
}

// isNull reports whether raw is the JSON null.
func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// str decodes a string attribute; null gives nil when nullable.
func (o object) str(attr string, nullable bool) (*string, bool, error) {
	raw, ok := o[attr]
	if !ok {
		return nil, false, nil
	}
	if isNull(raw) {
		if nullable {
			return nil, true, nil
		}
		return nil, true, typeError(attr, raw, "string")
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, true, typeError(attr, raw, "string")
	}
	return &s, true, nil
}

// boolean decodes a boolean attribute.
func (o object) boolean(attr string) (*bool, bool, error) {
	raw, ok := o[attr]
	if !ok {
		return nil, false, nil
	}
	var b bool
	if err := json.Unmarshal(raw, &b); err != nil || isNull(raw) {
		return nil, true, typeError(attr, raw, "boolean")
	}
	return &b, true, nil
}

// dict decodes a JSON object attribute (numbers as json.Number); null is {}.
func (o object) dict(attr string) (map[string]any, bool, error) {
	raw, ok := o[attr]
	if !ok {
		return nil, false, nil
	}
	if isNull(raw) {
		return map[string]any{}, true, nil
	}
	m, err := asDict(raw)
	if err != nil {
		return nil, true, typeError(attr, raw, "dict")
	}
	return m, true, nil
}

func asDict(raw json.RawMessage) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, errors.New("not an object")
	}
	return m, nil
}

// pyIntegerRE is what Python's int() takes from a string: an optional sign
// and decimal digits, single underscores allowed between digits.
var pyIntegerRE = regexp.MustCompile(`^[+-]?[0-9]+(_[0-9]+)*$`)

// pyInteger decodes attr as Ironic's args.integer does, with Python's int():
// a JSON integer; a number with a fraction or exponent, truncated toward
// zero; true and false as 1 and 0; a string holding a decimal integer
// (surrounding spaces, a sign and underscores between digits allowed).
// Absent or null gives nil. Anything else is 400 "Expected an integer for
// <attr>: <value>", and so is a value outside ±2147483647, which Python
// would take and nothing downstream could use.
func (o object) pyInteger(attr string) (*int64, error) {
	raw, ok := o[attr]
	if !ok || isNull(raw) {
		return nil, nil
	}
	bad := func() (*int64, error) {
		shown := string(raw)
		var s string
		if json.Unmarshal(raw, &s) == nil {
			shown = s
		}
		return nil, errorf(http.StatusBadRequest, "Expected an integer for %s: %s", attr, shown)
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return bad()
	}
	var text string
	switch x := v.(type) {
	case bool:
		n := int64(0)
		if x {
			n = 1
		}
		return &n, nil
	case json.Number:
		text = x.String()
	case string:
		text = strings.TrimSpace(x)
		if !pyIntegerRE.MatchString(text) {
			return bad()
		}
		text = strings.ReplaceAll(text, "_", "")
	default:
		return bad()
	}
	f, _, err := big.ParseFloat(text, 10, 256, big.ToZero)
	if err != nil || f.IsInf() {
		return bad()
	}
	i, _ := f.Int(nil) // truncates toward zero, as int() does
	if !i.IsInt64() || i.Int64() > math.MaxInt32 || i.Int64() < -math.MaxInt32 {
		return bad()
	}
	n := i.Int64()
	return &n, nil
}
