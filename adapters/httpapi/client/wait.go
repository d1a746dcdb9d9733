package client

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"time"

	"github.com/askbridge/askbridge/core"
)

// pollGrace is how long past its timeout WaitOnce waits for the server's
// answer. The server answers a wait at its timeout, after at most one
// read of its store, which it bounds at 30 s; a poll still unanswered a
// minute later is lost (a replica that stalled, a connection that died
// without a reset, which the operating system may keep for good), and
// only giving it up lets Wait poll again and see the question's close.
const pollGrace = time.Minute

// WaitOnce long-polls once: it returns when the question closes or after
// timeout (capped by the server), with State "open" in the latter case.
// A poll the server has not answered a minute after timeout is given up
// with an error (see pollGrace), while ctx goes on.
func (c *Client) WaitOnce(ctx context.Context, id core.QuestionID, timeout time.Duration) (*WaitResponse, error) {
	q := url.Values{"timeout": {timeout.String()}}
	limit := max(timeout, 0) + c.grace
	if limit < c.grace {
		limit = math.MaxInt64 // a timeout so long it overflowed: none
	}
	poll, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	res, err := call[WaitResponse](poll, c, http.MethodGet, "/v1/questions/"+url.PathEscape(string(id))+"/wait", q, nil)
	if err != nil && poll.Err() != nil && ctx.Err() == nil {
		return nil, fmt.Errorf("%w (no answer %s after the poll's timeout of %s)", err, c.grace, timeout)
	}
	return res, err
}

// Wait long-polls until the question closes and returns its resume, or
// returns ctx's error once ctx ends. It rides out transient failures (the
// connection dropping, a poll left unanswered past its timeout (WaitOnce),
// a 502, 503 or 504 while a replica restarts, and up to maxInternal 500s
// in a row, the store failing for a moment) by trying again with a
// growing pause; any other error ends it. A poll answered open at once (a
// poll timeout of 0, a draining server) is followed by the same pause, so
// Wait never spins.
func (c *Client) Wait(ctx context.Context, id core.QuestionID) (*WaitResponse, error) {
	return c.WaitWith(ctx, id, nil)
}

// WaitWith is Wait, telling outage (when not nil) of the failures it
// rides out: the error of the first that fails after a poll that did not,
// and nil when a poll gets through again; once per outage, however many
// retries it takes, so that a caller can say the server is not answering
// without a line per retry.
func (c *Client) WaitWith(ctx context.Context, id core.QuestionID, outage func(error)) (*WaitResponse, error) {
	pause := c.pause
	internal := 0 // 500s in a row
	down := false
	tell := func(err error) {
		if outage != nil && down != (err != nil) {
			outage(err)
		}
		down = err != nil
	}
	for {
		start := time.Now()
		res, err := c.WaitOnce(ctx, id, c.poll)
		switch {
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case err == nil:
			tell(nil)
		}
		switch {
		case err == nil && res.State != "open":
			return res, nil
		case err == nil && time.Since(start) >= quickPoll:
			pause, internal = c.pause, 0
			continue
		case err == nil:
			internal = 0
		case status(err) == http.StatusInternalServerError && internal < maxInternal:
			internal++
			tell(err)
		case !c.transient(err):
			return nil, err
		default:
			tell(err)
		}
		if !backOff(ctx, pause, err) {
			return nil, ctx.Err()
		}
		pause = min(2*pause, 5*time.Second)
	}
}

// quickPoll is how soon an open answer to a long poll counts as one that
// did not wait at all; maxInternal is how many 500s in a row Wait rides
// out before it gives up.
const (
	quickPoll   = 100 * time.Millisecond
	maxInternal = 5
)
