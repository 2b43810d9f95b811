package db

import (
	"bytes"
	"database/sql/driver"
	"encoding/json"
	"fmt"
)

// JSONObject is a JSON object stored in a text column. An empty or nil value
// is stored as "{}", never as the text "null", and NULL reads back as an
// empty (nil) map. Numbers decode as json.Number so values round-trip
// exactly.
type JSONObject map[string]any

// Value implements driver.Valuer.
func (o JSONObject) Value() (driver.Value, error) {
	if len(o) == 0 {
		return "{}", nil
	}
	b, err := json.Marshal(map[string]any(o))
	if err != nil {
		return nil, fmt.Errorf("encode JSON object: %w", err)
	}
	return string(b), nil
}

// Scan implements sql.Scanner.
func (o *JSONObject) Scan(src any) error {
	*o = nil
	return scanJSON(src, (*map[string]any)(o))
}

// JSONStrings is a JSON list of strings stored in a text column; nil is
// stored as "[]".
type JSONStrings []string

// Value implements driver.Valuer.
func (l JSONStrings) Value() (driver.Value, error) {
	if len(l) == 0 {
		return "[]", nil
	}
	b, err := json.Marshal([]string(l))
	if err != nil {
		return nil, fmt.Errorf("encode JSON list: %w", err)
	}
	return string(b), nil
}

// Scan implements sql.Scanner.
func (l *JSONStrings) Scan(src any) error {
	*l = nil
	return scanJSON(src, (*[]string)(l))
}

func scanJSON(src, dst any) error {
	var b []byte
	switch v := src.(type) {
	case nil:
		return nil
	case string:
		b = []byte(v)
	case []byte:
		b = v
	default:
		return fmt.Errorf("decode JSON column: unexpected %T", src)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	// Most JSON columns hold "{}": no decoder for those (a GET of one node
	// decodes 8 JSON columns).
	if m, ok := dst.(*map[string]any); ok {
		if string(b) == "{}" {
			*m = map[string]any{}
			return nil
		}
		if doc, ok := decodeObject(b); ok {
			*m = doc
			return nil
		}
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(dst); err != nil {
		return fmt.Errorf("decode JSON column: %w", err)
	}
	return nil
}
