//go:build !unix

package api

import "time"

func processCPU() (time.Duration, bool) { return 0, false }
