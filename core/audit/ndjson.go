package audit

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"

	"github.com/askbridge/askbridge/core"
)

// maxLine bounds one line of an export: an event with its payload and
// chain is far smaller.
const maxLine = 16 << 20

// Lines reads an NDJSON export (GET /v1/audit/export: one event a line)
// and hands each event to yield, stopping at yield's first error. A line
// that is not an event is an error naming its line number.
func Lines(r io.Reader, yield func(core.Event) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	for line := 1; sc.Scan(); line++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var e core.Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return fmt.Errorf("line %d is not an event of the log: %w", line, err)
		}
		if e.Kind == "" || e.Seq <= 0 {
			return fmt.Errorf("line %d is not an event of the log: it has no kind or seq", line)
		}
		if err := yield(e); err != nil {
			return err
		}
	}
	return sc.Err()
}
