package client

import (
	"bytes"
	"encoding/json"
	"sort"
)

// unmarshalNumbers decodes JSON keeping numbers as json.Number, so that
// integers such as memory_mb print as they came.
func unmarshalNumbers(b []byte, out any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(out)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
