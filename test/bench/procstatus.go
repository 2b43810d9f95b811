package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Memory is a process's resident memory from /proc/PID/status, in KiB:
// RSS now (VmRSS) and its peak (VmHWM).
type Memory struct {
	RSSKiB  int64 `json:"rss_kib"`
	PeakKiB int64 `json:"peak_kib"`
}

// Add sums two figures (several plugin processes).
func (m Memory) Add(o Memory) Memory {
	return Memory{RSSKiB: m.RSSKiB + o.RSSKiB, PeakKiB: m.PeakKiB + o.PeakKiB}
}

// MiB formats a KiB figure in MiB.
func MiB(kib int64) string { return fmt.Sprintf("%.1f", float64(kib)/1024) }

// parseStatus reads VmRSS and VmHWM from the text of /proc/PID/status.
func parseStatus(text string) (Memory, error) {
	var m Memory
	var seen int
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok || (key != "VmRSS" && key != "VmHWM") {
			continue
		}
		f := strings.Fields(val)
		if len(f) != 2 || f[1] != "kB" {
			return Memory{}, fmt.Errorf("%s: unexpected value %q (want N kB)", key, strings.TrimSpace(val))
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return Memory{}, fmt.Errorf("%s: %w", key, err)
		}
		if key == "VmRSS" {
			m.RSSKiB = n
		} else {
			m.PeakKiB = n
		}
		seen++
	}
	if seen != 2 {
		return Memory{}, fmt.Errorf("no VmRSS and VmHWM lines (a kernel thread, or not Linux?)")
	}
	return m, nil
}

// memoryOf reads the memory of process pid.
func memoryOf(pid int) (Memory, error) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return Memory{}, err
	}
	m, err := parseStatus(string(b))
	if err != nil {
		return Memory{}, fmt.Errorf("/proc/%d/status: %w", pid, err)
	}
	return m, nil
}

// parentOf reads the parent pid from the text of /proc/PID/stat (the
// command name, in parentheses, may hold spaces and parentheses).
func parentOf(stat string) (int, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("no command name in %q", stat)
	}
	f := strings.Fields(stat[i+1:])
	if len(f) < 2 {
		return 0, fmt.Errorf("short stat line %q", stat)
	}
	return strconv.Atoi(f[1])
}

// children lists the pids whose parent is pid.
func children(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		cpid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		if ppid, err := parentOf(string(b)); err == nil && ppid == pid {
			out = append(out, cpid)
		}
	}
	return out
}
