package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/loops"
)

// Error is a response other than success: the HTTP status and the API's
// error code and message. Code is one of core's codes (invalid, not_found,
// forbidden, conflict, internal, or unavailable with a 503 while the
// server's store fails over), or "" when the body was not the API's (a
// proxy's error page, say). errors.Is matches an Error to its code's
// ErrInvalid, ErrNotFound and the rest; errors.As finds it for its
// status, message and RetryAfter.
type Error struct {
	Status  int
	Code    string
	Message string
	// RetryAfter is the server's Retry-After, when it sent one (a 503
	// while its store fails over, say): how long to wait before trying
	// again.
	RetryAfter time.Duration
}

// Code is one of the API's error codes, as an error: an *Error with that
// code matches it under errors.Is, however the error was wrapped (an
// *AskError, a context's end), so a caller tests what a refusal means
// without comparing strings:
//
//	_, err := c.Answer(ctx, id, req)
//	if errors.Is(err, client.ErrConflict) {
//		// someone closed it first; the *Error's Message says who, when and how
//	}
//
// A code says what kind of refusal it is; the status tells apart those
// that share one (401, 403 and 429 are all ErrForbidden: a token missing
// or unknown, a role that may not, a refusal for a while).
type Code string

// The API's codes (core's vocabulary, the README's table of errors).
const (
	// ErrInvalid: the request breaks a rule (400), or its method (405),
	// its size (413) or what its body is sent as (415) is wrong; the
	// message names what. Sent again unchanged, it fails the same way.
	ErrInvalid = Code(core.CodeInvalid)
	// ErrNotFound: no such question, one this token may not see, or no
	// such route (Error.NoRoute).
	ErrNotFound = Code(core.CodeNotFound)
	// ErrForbidden: the token is missing or unknown (401), may not do
	// this (403), or may not for a while (429, with RetryAfter): its
	// address is held after too many unknown tokens, or the question
	// has as many waits parked as the server holds.
	ErrForbidden = Code(core.CodeForbidden)
	// ErrConflict: the question is not in a state that allows this (it
	// closed already: the message says who closed it, when and how), or
	// an ask repeated under its key with another body.
	ErrConflict = Code(core.CodeConflict)
	// ErrInternal: the server failed; its log has the cause.
	ErrInternal = Code(core.CodeInternal)
	// ErrUnavailable: the server's store is failing over (503, with
	// RetryAfter); the request may be sent again (Error.Unavailable).
	ErrUnavailable = Code(core.CodeUnavailable)
)

func (c Code) Error() string { return "askbridge: " + string(c) }

// Is reports whether target is e's code (a Code), for errors.Is. An
// error body that was not the API's (a proxy's page) has no code, and
// matches none.
func (e *Error) Is(target error) bool {
	c, ok := target.(Code)
	return ok && e.Code != "" && e.Code == string(c)
}

// Unavailable reports whether the server answered 503 because its store
// is failing over or briefly unreachable (code "unavailable"): the
// request may be sent again after RetryAfter.
func (e *Error) Unavailable() bool {
	return e.Status == http.StatusServiceUnavailable && e.Code == "unavailable"
}

// NoRouteMessage is the message of the server's 404 for a path it does
// not serve, as against a question it does not know.
const NoRouteMessage = "no such route"

// NoRoute reports whether the server does not serve the route at all (an
// older server, or one that does not offer it), rather than not knowing
// what the request named.
func (e *Error) NoRoute() bool {
	return e.Status == http.StatusNotFound && e.Message == NoRouteMessage
}

func (e *Error) Error() string {
	if e.Code == "" {
		return fmt.Sprintf("askbridge: HTTP %d: %s", e.Status, e.Message)
	}
	return fmt.Sprintf("askbridge: HTTP %d %s: %s", e.Status, e.Code, e.Message)
}

// Response is e's status, code and message as plain values: code that
// classifies a failure without importing this package reads an *Error
// through it (adapters/internal/addressfault, for a TLS server's refusal
// of plain HTTP; the MCP adapter, for whether a failed ask may have been
// parked).
func (e *Error) Response() (status int, code, message string) {
	return e.Status, e.Code, e.Message
}

// unavailable reports whether err is the server's 503 for a store that is
// failing over.
func unavailable(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Unavailable()
}

// retryAfter is the pause the server asked for with err, or 0.
func retryAfter(err error) time.Duration {
	var e *Error
	if errors.As(err, &e) {
		return min(e.RetryAfter, maxRetryAfter)
	}
	return 0
}

// backOff pauses after a failed try: for pause, or for the server's
// Retry-After with err when that is longer, or until ctx ends. It
// reports whether ctx is still live.
func backOff(ctx context.Context, pause time.Duration, err error) bool {
	return loops.Sleep(ctx, max(pause, retryAfter(err)))
}

// maxRetryAfter caps a server's Retry-After, so a wrong header cannot
// park a client for an hour.
const maxRetryAfter = 30 * time.Second

// retryableAsk reports whether a failed ask may be sent again: it never
// got an answer, or got a 5xx. A 4xx is the request's own fault and would
// fail the same way again, and so would a request that could not be made
// (arguments that are not JSON), which was never sent, and one sent to an
// address no retry mends (c.misaddressed).
func (c *Client) retryableAsk(err error) bool {
	var e *Error
	if errors.As(err, &e) {
		return e.Status >= 500 || heldFor(e)
	}
	return !errors.As(err, new(*requestError)) && !c.misaddressed(err)
}

// requestError is a request the client could not make (its body does not
// encode, its URL does not parse): nothing was sent, and sending it again
// would fail the same way.
type requestError struct{ err error }

func (e *requestError) Error() string { return e.err.Error() }
func (e *requestError) Unwrap() error { return e.err }

// status is the HTTP status of a response err came from, 0 if none.
func status(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.Status
	}
	return 0
}

// transient reports whether a failed long poll is worth repeating.
func (c *Client) transient(err error) bool {
	var e *Error
	if errors.As(err, &e) {
		return e.Status == http.StatusBadGateway || e.Status == http.StatusServiceUnavailable || e.Status == http.StatusGatewayTimeout ||
			heldFor(e)
	}
	// No response at all: the connection failed, unless the request could
	// not even be made, or went to an address no retry mends.
	return !errors.As(err, new(*requestError)) && !c.misaddressed(err)
}

// heldFor reports a 429 that says when to come back: the server holds
// this client's address for a while (another process there spent its
// guesses with a wrong token), or the question has as many waits parked
// as it holds, and names the wait, which a valid token rides out as it
// rides out a replica restarting (the wait capped at maxRetryAfter, as
// every server-named wait is).
func heldFor(e *Error) bool {
	return e.Status == http.StatusTooManyRequests && e.RetryAfter > 0
}
