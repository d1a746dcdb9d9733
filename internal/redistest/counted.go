package redistest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Counted is a redis-server run under valgrind's callgrind, which counts
// the machine instructions the server runs. Counts, unlike times, repeat
// exactly for the same commands whatever else the machine is doing, so a
// benchmark can compare two scripts' cost in Redis without the noise of
// sharing two cores with its own client. The server runs about fifty
// times slower than natively: it is for counting, not for timing.
type Counted struct {
	*Server
	dir   string
	dumps int
}

// StartCounted starts a standalone redis-server under callgrind for the
// test and stops it when the test ends. It fails the test if valgrind or
// redis-server is missing.
func StartCounted(t testing.TB) *Counted {
	t.Helper()
	c, err := startCounted(t.TempDir())
	if err != nil {
		t.Fatalf("redistest: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

func startCounted(dir string) (*Counted, error) {
	for _, tool := range []string{"valgrind", "callgrind_control"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, fmt.Errorf("%s is not on PATH; install valgrind (Debian/Ubuntu: apt-get install valgrind)", tool)
		}
	}
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, errors.New(InstallHint)
	}
	out := filepath.Join(dir, "callgrind")
	s, err := launch("valgrind", func(port int) ([]string, error) {
		return append([]string{"--tool=callgrind", "--callgrind-out-file=" + out, bin}, serverArgs(port, dir, false)...), nil
	})
	if err != nil {
		return nil, err
	}
	return &Counted{Server: s, dir: dir}, nil
}

// Zero sets the count to zero.
func (c *Counted) Zero() error {
	return c.control("--zero")
}

// Count is how many instructions the server has run since the last Zero
// (or its start), in everything it did: reading and parsing commands,
// running them and writing replies.
func (c *Counted) Count() (int64, error) {
	if err := c.control("--dump"); err != nil {
		return 0, err
	}
	// Each dump is a file of its own, numbered from 1 after the output
	// file's name; its "summary:" line is the total of the events counted
	// (instructions only, callgrind's default).
	c.dumps++
	data, err := os.ReadFile(filepath.Join(c.dir, "callgrind."+strconv.Itoa(c.dumps)))
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(line, "summary: "); ok {
			return strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		}
	}
	return 0, fmt.Errorf("callgrind dump %d has no summary line", c.dumps)
}

// control runs callgrind_control with the option on the server's process;
// it returns once the server has done it.
func (c *Counted) control(option string) error {
	out, err := exec.Command("callgrind_control", option, strconv.Itoa(c.cmd.Process.Pid)).CombinedOutput()
	if err != nil {
		return fmt.Errorf("callgrind_control %s: %v: %s", option, err, out)
	}
	return nil
}
