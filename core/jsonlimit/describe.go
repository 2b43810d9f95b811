package jsonlimit

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
)

// Describe words an error from decoding a client's JSON (encoding/json,
// Check) for the client: where the document is malformed, which member
// has the wrong kind of value and what kind it must be. It never names a
// Go type, a Go struct field or the decoder itself, and never echoes a
// value, which may be a secret.
func Describe(err error) string {
	var (
		se *json.SyntaxError
		te *json.UnmarshalTypeError
		le *Error
	)
	switch {
	case err == nil:
		return ""
	case errors.As(err, &le):
		return le.Msg
	case errors.As(err, &se):
		if se.Error() == "unexpected end of JSON input" { // json.Unmarshal's word for io.ErrUnexpectedEOF
			return "the JSON document is incomplete"
		}
		return fmt.Sprintf("malformed JSON at byte %d", se.Offset)
	case errors.As(err, &te):
		want, got := kindOf(te.Type), valueWord(te.Value)
		if te.Field != "" {
			return fmt.Sprintf("%q must be %s, not %s", te.Field, want, got)
		}
		return fmt.Sprintf("the document must be %s, not %s", want, got)
	case errors.Is(err, io.EOF):
		return "the document is empty"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "the JSON document is incomplete"
	}
	// DisallowUnknownFields' error has no type of its own.
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return "unknown member " + name
	}
	return "malformed JSON"
}

// kindOf is the JSON kind a Go type decodes from, in words.
func kindOf(t reflect.Type) string {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return "a JSON value"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "a list"
	}
	return "another kind of value"
}

// valueWord is encoding/json's description of a JSON value ("number",
// "number 1.5", "bool", "array", …) in words, without the value.
func valueWord(v string) string {
	kind, _, _ := strings.Cut(v, " ")
	switch kind {
	case "string":
		return "a string"
	case "number":
		return "a number"
	case "bool":
		return "true or false"
	case "array":
		return "a list"
	case "object":
		return "an object"
	case "null":
		return "null"
	}
	return "another kind of value"
}
