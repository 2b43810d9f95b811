package api

import (
	"bytes"
	"sort"
)

func sortStrings(s []string) { sort.Strings(s) }

func bytesContains(b []byte, s string) bool { return bytes.Contains(b, []byte(s)) }
