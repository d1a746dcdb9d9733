package client

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// Ask parks a question and returns it as stored. The asking agent is the
// token's name.
//
// Ask is safe to retry, and retries by itself: a request that failed on
// the way (the connection dropped, a 5xx while a replica restarts or the
// store stalls) is sent again, with a growing pause, up to askAttempts
// times or until ctx ends. The server parks one question per agent, run
// and tool call id, or per Idempotency-Key, so a retry of an ask that was
// in fact stored gets that question back. An ask with neither gets a
// random Idempotency-Key here, for its own retries; if Ask then gives up
// not knowing whether the question was parked, its *AskError carries
// that key, for the caller's own retry to get the question rather than
// ask people twice.
func (c *Client) Ask(ctx context.Context, req AskRequest) (*AgentQuestion, error) {
	q, _, err := c.AskOrRepeat(ctx, req)
	return q, err
}

// AskOrRepeat is Ask, and reports whether the server took the ask as a
// repeat of one it had parked before (it answered 200, not 201): nothing
// new was parked, and the question is the earlier ask's, maybe closed
// long since. Ask's own retry after a lost reply reads as a repeat too.
func (c *Client) AskOrRepeat(ctx context.Context, req AskRequest) (*AgentQuestion, bool, error) {
	key := req.IdempotencyKey
	if key == "" && req.ToolCallID == "" {
		key = randomKey()
	}
	hdr := http.Header{}
	if key != "" {
		hdr.Set("Idempotency-Key", key)
	}
	unknown := func(err error) error {
		if key == "" {
			return err // the tool call id is the caller's key already
		}
		return &AskError{Key: key, Err: err}
	}
	var (
		q      *AgentQuestion
		repeat bool
	)
	err := c.retried(ctx, func() (err error) {
		q, repeat, err = c.postAsk(ctx, req, hdr)
		return err
	})
	if err != nil && c.retryableAsk(err) {
		return nil, false, unknown(err) // it may have been parked
	}
	return q, repeat, err // parked, or refused: nothing was parked
}

// retried calls try until it succeeds, fails for good (c.retryableAsk),
// has failed askAttempts times (for longer while the server says its
// store is failing over), or ctx ends, pausing longer after each
// failure; it returns try's last error, and once ctx has ended, ctx's
// error with it (stopped).
func (c *Client) retried(ctx context.Context, try func() error) error {
	pause := c.pause
	start := time.Now()
	for attempt := 1; ; attempt++ {
		err := try()
		if err == nil || !c.retryableAsk(err) {
			return err
		}
		if ctx.Err() != nil {
			return stopped(ctx, err)
		}
		// A store failing over is waited out for longer than other
		// failures: its promotion takes seconds, and it says so.
		if attempt >= askAttempts && (!unavailable(err) || time.Since(start) > askUnavailableFor) {
			return err
		}
		if !backOff(ctx, pause, err) {
			return stopped(ctx, err)
		}
		pause = min(2*pause, 2*time.Second)
	}
}

// stopped is err, the last try's, as retried returns it once ctx has
// ended: errors.Is finds ctx's error in it, as in Wait's, and errors.As
// still finds the try's (its *Error, say). A try cut short by ctx already
// carries ctx's error; one that failed before ctx ended, its pause then
// cut short, did not, and a caller that had stopped read a server's 503
// as the reason.
func stopped(ctx context.Context, err error) error {
	if errors.Is(err, ctx.Err()) {
		return err
	}
	return fmt.Errorf("%w (stopped after: %w)", ctx.Err(), err)
}

// postAsk sends the ask once; repeat is the server's 200 (a repeat)
// rather than its 201 (parked now).
func (c *Client) postAsk(ctx context.Context, req AskRequest, hdr http.Header) (*AgentQuestion, bool, error) {
	q, status, err := callStatus[AgentQuestion](ctx, c, http.MethodPost, "/v1/questions", nil, req, hdr)
	return q, status == http.StatusOK, err
}

// AskError is an ask Ask gave up on without knowing whether the server
// parked it (the connection dropped, 5xx to the last try). Asking again
// with Key as the IdempotencyKey (and the same request) gets the
// question if it was parked, and parks it once if it was not.
type AskError struct {
	Key string
	Err error
}

func (e *AskError) Error() string { return e.Err.Error() }
func (e *AskError) Unwrap() error { return e.Err }

// IdempotencyKey is Key, for code that reads an *AskError without
// importing this package (the MCP adapter, which names the key to a
// model so that it sends the same call again rather than ask twice).
func (e *AskError) IdempotencyKey() string { return e.Key }

// askAttempts bounds Ask's retries: about four seconds of pauses, enough
// to ride out a replica's restart without hiding a server that is down.
const askAttempts = 5

// askUnavailableFor is how long Ask goes on retrying while the server
// says its store is failing over (a Sentinel's default failure detection
// alone takes 30 s).
const askUnavailableFor = time.Minute

// randomKey is an Idempotency-Key no other ask will have.
func randomKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}
