//go:build unix

package api

import (
	"syscall"
	"time"
)

// processCPU is the CPU time (user and system) this process has used, for
// benchmarks that report CPU per request next to wall time, which a busy
// machine inflates.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
