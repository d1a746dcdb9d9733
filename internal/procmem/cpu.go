package procmem

import (
	"os"
	"strconv"
	"strings"
	"time"
)

// userHZ is the unit /proc reports CPU time in: clock ticks, 100 a second
// on every Linux the project runs on.
const userHZ = 100

// CPU is the CPU time, user and system, that the process has used so far,
// from /proc/self/stat (Linux; 0 elsewhere), to a tick (10 ms): the
// benchmarks that report a process's CPU during a burst read it before and
// after.
func CPU() time.Duration { return cpuIn("/proc/self/stat") }

// CPUOf is CPU for another process, by its pid: a benchmark's bridge
// running in a process of its own, apart from the clients that time it.
func CPUOf(pid int) time.Duration { return cpuIn("/proc/" + strconv.Itoa(pid) + "/stat") }

func cpuIn(path string) time.Duration {
	stat, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	// The command name (field 2) is in parentheses and may hold spaces;
	// utime and stime are fields 14 and 15, the 12th and 13th after it.
	s := string(stat)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	user, err1 := strconv.ParseInt(f[11], 10, 64)
	sys, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0
	}
	return time.Duration(user+sys) * time.Second / userHZ
}
