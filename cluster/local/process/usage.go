package process

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

const (
	errFmtRead  = "cannot read %s"
	errFmtParse = "cannot parse %s"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/PID/stat. It is
// 100 on every Linux architecture Go supports.
const clockTicks = 100

// A Usage is what a process has cost.
type Usage struct {
	// RSS is the resident set now, in bytes.
	RSS uint64
	// PeakRSS is the largest resident set so far, in bytes.
	PeakRSS uint64
	// RSSFile is the part of RSS that maps files, in bytes: for a static
	// Go program, pages of its executable, which its size and what its
	// packages' initialisation touched decide, not its heap.
	RSSFile uint64
	// CPUSeconds is user plus system time so far.
	CPUSeconds float64
}

// ReadUsage reads a process's memory and CPU time from /proc.
func ReadUsage(pid int) (Usage, error) {
	var u Usage
	status := fmt.Sprintf("/proc/%d/status", pid)
	b, err := os.ReadFile(status)
	if err != nil {
		return u, errors.Wrapf(err, errFmtRead, status)
	}
	for line := range bytes.Lines(b) {
		k, v, _ := strings.Cut(string(line), ":")
		switch k {
		case "VmRSS":
			u.RSS, err = kibibytes(v)
		case "VmHWM":
			u.PeakRSS, err = kibibytes(v)
		case "RssFile":
			u.RSSFile, err = kibibytes(v)
		}
		if err != nil {
			return u, errors.Wrapf(err, errFmtParse, status)
		}
	}
	stat := fmt.Sprintf("/proc/%d/stat", pid)
	b, err = os.ReadFile(stat)
	if err != nil {
		return u, errors.Wrapf(err, errFmtRead, stat)
	}
	// The command name may hold spaces and parentheses; the fields after its
	// last ')' are fixed: utime and stime are the 12th and 13th of them.
	fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(fields) < 13 {
		return u, errors.Errorf(errFmtParse, stat)
	}
	var ticks uint64
	for _, f := range fields[11:13] {
		t, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return u, errors.Wrapf(err, errFmtParse, stat)
		}
		ticks += t
	}
	u.CPUSeconds = float64(ticks) / clockTicks
	return u, nil
}

// kibibytes parses a /proc/PID/status size such as "  1234 kB".
func kibibytes(v string) (uint64, error) {
	n, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
	return n * 1024, err
}
