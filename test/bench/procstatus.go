package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Memory is a process's resident memory, in KiB: from /proc/PID/status RSS
// now (VmRSS), its peak (VmHWM) and the anonymous and file-backed parts of
// VmRSS (RssAnon, RssFile: the latter is mostly the rivet binary's own
// pages, which every process running it maps); from
// /proc/PID/smaps_rollup the proportional set size (Pss), which counts a
// page shared by n processes as 1/n, so the Pss of processes running one
// binary add up to what they take from the machine together.
type Memory struct {
	RSSKiB  int64 `json:"rss_kib"`
	PeakKiB int64 `json:"peak_kib"`
	AnonKiB int64 `json:"anon_kib"`
	FileKiB int64 `json:"file_kib"`
	PssKiB  int64 `json:"pss_kib"`
}

// Add sums two figures (several plugin processes).
func (m Memory) Add(o Memory) Memory {
	return Memory{RSSKiB: m.RSSKiB + o.RSSKiB, PeakKiB: m.PeakKiB + o.PeakKiB, AnonKiB: m.AnonKiB + o.AnonKiB,
		FileKiB: m.FileKiB + o.FileKiB, PssKiB: m.PssKiB + o.PssKiB}
}

// MiB formats a KiB figure in MiB.
func MiB(kib int64) string { return fmt.Sprintf("%.1f", float64(kib)/1024) }

// kibLines reads "Key: N kB" lines of a /proc file into the fields keys
// names; required keys must all be there.
func kibLines(text string, keys map[string]*int64, required ...string) error {
	seen := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		dst, want := keys[key]
		if !ok || !want {
			continue
		}
		f := strings.Fields(val)
		if len(f) != 2 || f[1] != "kB" {
			return fmt.Errorf("%s: unexpected value %q (want N kB)", key, strings.TrimSpace(val))
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		*dst = n
		seen[key] = true
	}
	for _, k := range required {
		if !seen[k] {
			return fmt.Errorf("no %s line (a kernel thread, or not Linux?)", k)
		}
	}
	return nil
}

// parseStatus reads VmRSS, VmHWM and, where the kernel gives them, RssAnon
// and RssFile from the text of /proc/PID/status.
func parseStatus(text string) (Memory, error) {
	var m Memory
	err := kibLines(text, map[string]*int64{"VmRSS": &m.RSSKiB, "VmHWM": &m.PeakKiB, "RssAnon": &m.AnonKiB,
		"RssFile": &m.FileKiB}, "VmRSS", "VmHWM")
	return m, err
}

// memoryOf reads the memory of process pid.
func memoryOf(pid int) (Memory, error) {
	dir := filepath.Join("/proc", strconv.Itoa(pid))
	b, err := os.ReadFile(filepath.Join(dir, "status"))
	if err != nil {
		return Memory{}, err
	}
	m, err := parseStatus(string(b))
	if err != nil {
		return Memory{}, fmt.Errorf("/proc/%d/status: %w", pid, err)
	}
	// smaps_rollup is Linux 4.14+; without it Pss stays 0.
	if b, err := os.ReadFile(filepath.Join(dir, "smaps_rollup")); err == nil {
		if err := kibLines(string(b), map[string]*int64{"Pss": &m.PssKiB}); err != nil {
			return Memory{}, fmt.Errorf("/proc/%d/smaps_rollup: %w", pid, err)
		}
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

// clockTicks is the kernel's USER_HZ, the unit of /proc/PID/stat times:
// 100 on every Linux architecture Go supports.
const clockTicks = 100

// procCPU is the CPU time (user + system) process pid has used, from
// /proc/PID/stat; false when it cannot be read (not Linux, or gone).
func procCPU(pid int) (time.Duration, bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, false
	}
	return parseStatCPU(string(b))
}

// parseStatCPU reads utime and stime (fields 14 and 15) of a
// /proc/PID/stat line; the command name in parentheses may hold spaces.
func parseStatCPU(stat string) (time.Duration, bool) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(stat[i+1:])
	if len(f) < 13 {
		return 0, false
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(utime+stime) * time.Second / clockTicks, true
}
