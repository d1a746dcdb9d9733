// Package procmem reads what the process holds in memory, for the
// benchmarks that report it.
package procmem

import (
	"fmt"
	"os"
	"strings"
)

// Resident is the process's resident set in bytes, its anonymous and its
// file-backed pages apart, from /proc/self/status (Linux); 0 for each
// where the file or the line is missing.
func Resident() (anon, file int64) {
	status, _ := os.ReadFile("/proc/self/status")
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
