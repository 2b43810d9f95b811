package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// parse converts text from a file or the environment to the Go value of kind.
// The error says what was expected, without the value (callers add it,
// masked where needed).
func parse(kind Kind, raw string) (any, error) {
	s := strings.TrimSpace(raw)
	switch kind {
	case Bool:
		return parseBool(s)
	case Int:
		n, err := strconv.Atoi(s)
		if err != nil {
			return nil, fmt.Errorf("is not an integer")
		}
		return n, nil
	case Duration:
		return parseDuration(s)
	case List:
		return parseList(s), nil
	}
	return raw, nil
}

func parseBool(s string) (bool, error) {
	switch strings.ToLower(s) {
	case "true", "yes", "on", "1":
		return true, nil
	case "false", "no", "off", "0":
		return false, nil
	}
	return false, fmt.Errorf("is not a boolean: use true/false, yes/no, on/off or 1/0")
}

// parseDuration accepts seconds as oslo does, fractions included ("0.5"),
// and Go durations ("90s", "1m30s"). Both are exact to the nanosecond.
func parseDuration(s string) (time.Duration, error) {
	if isDecimal(s) {
		s += "s"
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("is not a duration: use seconds (10, 0.5) or a Go duration (90s, 1m30s)")
	}
	return d, nil
}

// isDecimal reports whether s is a plain decimal number: an optional sign,
// digits and at most one point.
func isDecimal(s string) bool {
	s = strings.TrimLeft(s, "+-")
	digits, point := 0, 0
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case r == '.':
			point++
		default:
			return false
		}
	}
	return digits > 0 && point <= 1
}

func parseList(s string) []string {
	out := []string{}
	for item := range strings.SplitSeq(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// format renders a value of kind as it would be written in a file; it is the
// inverse of parse. Durations are written in seconds.
func format(kind Kind, v any) string {
	switch kind {
	case Bool:
		return strconv.FormatBool(v.(bool))
	case Int:
		return strconv.Itoa(v.(int))
	case Duration:
		return formatSeconds(v.(time.Duration))
	case List:
		return strings.Join(v.([]string), ",")
	}
	return v.(string)
}

// formatSeconds writes d as exact decimal seconds: "10", "0.5", "-1.25".
func formatSeconds(d time.Duration) string {
	sign, n := "", uint64(d)
	if d < 0 {
		sign, n = "-", uint64(-d) // -MinInt64 wraps to itself, read as unsigned
	}
	whole, frac := n/uint64(time.Second), n%uint64(time.Second)
	out := sign + strconv.FormatUint(whole, 10)
	if frac != 0 {
		out += "." + strings.TrimRight(fmt.Sprintf("%09d", frac), "0")
	}
	return out
}
