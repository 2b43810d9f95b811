package version

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// MaxComponent bounds each component so that versions fit comfortably in any
// column or header and arithmetic on them can never overflow.
const MaxComponent = 1<<31 - 1

// ErrInvalid is wrapped by every parse error.
var ErrInvalid = errors.New("invalid version")

// Version is a (major, minor) pair. The zero value is "0.0".
type Version struct {
	Major int
	Minor int
}

// New returns the version major.minor. It panics on a negative component,
// which is a programming error (use Parse for input).
func New(major, minor int) Version {
	if major < 0 || minor < 0 || major > MaxComponent || minor > MaxComponent {
		panic(fmt.Sprintf("version.New(%d, %d): component out of range", major, minor))
	}
	return Version{Major: major, Minor: minor}
}

// Parse reads "M.N" strictly: it rejects "1", "1.2.3", "01.2", "+1.2",
// "-1.2", " 1.2", "spam" and components above MaxComponent.
func Parse(s string) (Version, error) {
	maj, min, ok := strings.Cut(s, ".")
	if !ok {
		return Version{}, fmt.Errorf("%w %q: want MAJOR.MINOR", ErrInvalid, s)
	}
	a, err := component(maj)
	if err != nil {
		return Version{}, fmt.Errorf("%w %q: major %v", ErrInvalid, s, err)
	}
	b, err := component(min)
	if err != nil {
		return Version{}, fmt.Errorf("%w %q: minor %v", ErrInvalid, s, err)
	}
	return Version{Major: a, Minor: b}, nil
}

func component(s string) (int, error) {
	if s == "" {
		return 0, errors.New("is empty")
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return 0, errors.New("must be decimal digits")
		}
	}
	if len(s) > 1 && s[0] == '0' {
		return 0, errors.New("has a leading zero")
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n > MaxComponent {
		return 0, fmt.Errorf("is larger than %d", MaxComponent)
	}
	return int(n), nil
}

// MustParse is Parse for constants; it panics on error.
func MustParse(s string) Version {
	v, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return v
}

// String formats the version as "M.N".
func (v Version) String() string {
	return strconv.Itoa(v.Major) + "." + strconv.Itoa(v.Minor)
}

// Compare returns -1, 0 or +1 as v is older than, equal to or newer than o.
func (v Version) Compare(o Version) int {
	switch {
	case v.Major != o.Major:
		if v.Major < o.Major {
			return -1
		}
		return 1
	case v.Minor < o.Minor:
		return -1
	case v.Minor > o.Minor:
		return 1
	}
	return 0
}

// Less reports whether v is older than o.
func (v Version) Less(o Version) bool { return v.Compare(o) < 0 }

// AtLeast reports whether v is o or newer.
func (v Version) AtLeast(o Version) bool { return v.Compare(o) >= 0 }

// ServedBy reports whether an implementation at impl can serve a request at
// v: same major and v's minor not above impl's (oslo's version_is_compatible).
func (v Version) ServedBy(impl Version) bool {
	return v.Major == impl.Major && v.Minor <= impl.Minor
}

// IsZero reports whether v is the zero version 0.0.
func (v Version) IsZero() bool { return v == Version{} }

// MarshalText implements encoding.TextMarshaler ("M.N").
func (v Version) MarshalText() ([]byte, error) { return []byte(v.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler with Parse's strictness.
func (v *Version) UnmarshalText(b []byte) error {
	p, err := Parse(string(b))
	if err != nil {
		return err
	}
	*v = p
	return nil
}

// Max returns the newest of vs, or the zero version when vs is empty.
func Max(vs ...Version) Version {
	var m Version
	for i, v := range vs {
		if i == 0 || m.Less(v) {
			m = v
		}
	}
	return m
}
