package clock

import (
	"fmt"
	"os"
	"time"
)

// SkewEnv is the environment variable that skews Now, for tests.
const SkewEnv = "RIVET_TEST_CLOCK_SKEW"

// skew is read once; a bad value is reported by Skew and ignored.
var skew, skewErr = parseSkew(os.Getenv(SkewEnv))

func parseSkew(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%s=%q ignored: %w", SkewEnv, s, err)
	}
	return d, nil
}

// Now is the wall clock, in UTC and truncated to microseconds (the
// precision every database stores), shifted by the test skew if any.
func Now() time.Time { return time.Now().Add(skew).UTC().Truncate(time.Microsecond) }

// Skew returns the test skew in force (0 normally) and, when the variable
// is set but not a duration, why it was ignored.
func Skew() (time.Duration, error) { return skew, skewErr }
