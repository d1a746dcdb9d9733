// Package procmem reads what the process holds in memory, for the
// benchmarks that report it.
package procmem

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Resident is the process's resident set in bytes, its anonymous and its
// file-backed pages apart, from /proc/self/status (Linux); 0 for each
// where the file or the line is missing.
func Resident() (anon, file int64) { return residentIn("/proc/self/status") }

// ResidentOf is Resident for another process, by its pid: a benchmark's
// bridge running in a process of its own.
func ResidentOf(pid int) (anon, file int64) {
	return residentIn("/proc/" + strconv.Itoa(pid) + "/status")
}

func residentIn(path string) (anon, file int64) {
	status, _ := os.ReadFile(path)
	for _, line := range strings.Split(string(status), "\n") {
		var kb int64
		if _, err := fmt.Sscanf(line, "RssAnon: %d kB", &kb); err == nil {
			anon = kb << 10
		}
		if _, err := fmt.Sscanf(line, "RssFile: %d kB", &kb); err == nil {
			file = kb << 10
		}
	}
	return anon, file
}
