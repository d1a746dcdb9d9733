package core

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// DurationForms names the durations every door accepts, for refusals
// ("write a positive " + DurationForms): the
// YAML file, the HTTP API, MCP, hooks and the environment all read
// durations with [ParseDuration], so a value that works in one works in
// all of them.
const DurationForms = `number with s, m, h or d, such as 90s, 30m, 2h or 1d, or a combination such as 1h30m or 1d12h`

// maxDays bounds the day term: more than ten years is a typo, and the
// bound keeps days*24h far from overflowing a time.Duration.
const maxDays = 3650

// ParseDuration reads a non-negative duration: Go's duration text
// ("90s", "1h30m"), optionally led by a whole number of days ("30d",
// "1d12h"), because people say retention and deadlines in days. Case and
// surrounding space are ignored. It is the one parser of durations.
func ParseDuration(raw string) (time.Duration, error) {
	s := strings.ToLower(strings.TrimSpace(raw))
	var days time.Duration
	if i := strings.IndexByte(s, 'd'); i >= 0 {
		n, err := strconv.Atoi(s[:i])
		if err != nil || n < 0 || n > maxDays || s[:i] != strconv.Itoa(n) {
			return 0, errDuration
		}
		days, s = time.Duration(n)*24*time.Hour, s[i+1:]
		if s == "" {
			return days, nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 || s[0] == '+' || s[0] == '-' || d > math.MaxInt64-days {
		return 0, errDuration // the last: days and the rest would overflow
	}
	return days + d, nil
}

// errDuration is ParseDuration's refusal; callers name the value and the
// setting, and DurationForms says what would have been accepted.
var errDuration = errors.New("not a duration: write a " + DurationForms)

// Duration is a time.Duration that reads and writes JSON as duration text
// ("30m0s"), the form asks use, instead of nanoseconds.
type Duration time.Duration

func (d Duration) String() string { return time.Duration(d).String() }

func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON takes duration text ([ParseDuration]), and also a bare
// number of nanoseconds, so records written either way read back. Its
// refusal is plain: the decoder it runs under names the field.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		var n int64
		if err := json.Unmarshal(b, &n); err != nil {
			return fmt.Errorf("a duration is text: a %s", DurationForms)
		}
		*d = Duration(n)
		return nil
	}
	v, err := ParseDuration(s)
	if err != nil {
		return fmt.Errorf("%q is %w", s, err)
	}
	*d = Duration(v)
	return nil
}
