package client

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
)

// sseMessage is one dispatched Server-Sent Events message.
type sseMessage struct {
	id, event, data string
}

// maxSSELine bounds one line of the stream; an event is far smaller.
const maxSSELine = 1 << 20

// readSSE parses a text/event-stream body and calls fn for each message
// that carries data, following the HTML standard's field rules (comments
// ignored, one optional space after the colon, data lines joined by
// newlines, a blank line dispatches).
func readSSE(r io.Reader, fn func(sseMessage) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxSSELine)
	var m sseMessage
	var data []string
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			if len(data) > 0 {
				m.data = strings.Join(data, "\n")
				if err := fn(m); err != nil {
					return err
				}
			}
			m, data = sseMessage{id: m.id}, nil
			continue
		}
		if strings.HasPrefix(line, ":") {
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "id":
			m.id = value
		case "event":
			m.event = value
		case "data":
			data = append(data, value)
		}
	}
	err := sc.Err()
	if err != nil && !errors.Is(err, bufio.ErrTooLong) {
		// The body broke off: the server aborted the response (its read
		// of the log failed, or the token stopped holding) or the
		// connection dropped. Said so, since "unexpected EOF" alone does
		// not tell a user that the events they asked for are not all there.
		return fmt.Errorf("askbridge: the event stream broke off: %w", err)
	}
	return err
}
