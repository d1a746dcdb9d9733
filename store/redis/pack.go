package redis

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Cards and events are stored packed: their parts in a fixed order,
// separated by packSep, rather than as JSON, whose member names would
// take as much room again. Packing is only for parts that hold no packSep;
// callers store anything else as JSON, which never holds a raw control
// character, and tell the two apart by the first byte.

// packSep separates packed parts: the ASCII unit separator, which no
// platform puts in a room or message id and no one in an event's kind or
// actor.
const packSep = "\x1f"

// pack joins parts, or reports false if one holds packSep or is not
// UTF-8 (which JSON would have replaced, so reading it back from JSON and
// from a packed value would differ).
func pack(parts ...string) (string, bool) {
	for _, p := range parts {
		if strings.Contains(p, packSep) || !utf8.ValidString(p) {
			return "", false
		}
	}
	return strings.Join(parts, packSep), true
}

// unpack splits s into exactly n parts (the last takes the rest).
func unpack(s string, n int) ([]string, error) {
	p := strings.SplitN(s, packSep, n)
	if len(p) != n {
		return nil, fmt.Errorf("packed value has %d parts, not %d", len(p), n)
	}
	return p, nil
}

// packTime spells a time: its Unix nanoseconds in base 36 when that says
// all of it (an instant in UTC within the nanosecond range), 12 bytes for
// this century, which keeps even a card with two 19-digit Discord ids
// under the 64 bytes of a listpack value; RFC 3339 text, as JSON has it,
// otherwise. Text always holds a colon, base 36 never does.
func packTime(t time.Time) (string, error) {
	if _, off := t.Zone(); off == 0 {
		if ns := t.UnixNano(); time.Unix(0, ns).Equal(t) {
			return strconv.FormatInt(ns, 36), nil
		}
	}
	b, err := t.MarshalText()
	return string(b), err
}

func unpackTime(s string) (time.Time, error) {
	var t time.Time
	if strings.Contains(s, ":") {
		err := t.UnmarshalText([]byte(s))
		return t, err
	}
	ns, err := strconv.ParseInt(s, 36, 64)
	if err != nil {
		return t, fmt.Errorf("packed time %q: %w", s, err)
	}
	return time.Unix(0, ns).UTC(), nil
}
