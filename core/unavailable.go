package core

import "errors"

// ErrUnavailable marks a store's error that means "not now" rather than
// "broken": the store is failing over or briefly unreachable (a primary
// died and a replica is being promoted, a node refuses writes while it
// loads, a connection was refused or cut). A store marks the errors it
// makes itself so that errors.Is(err, ErrUnavailable) holds, and may offer
// a function that recognises its client's (store/redis's Unavailable),
// which a program hands to the door that replies. What the store was
// asked may or may not have been recorded; a retry learns which, since
// asks are idempotent and a repeated answer is told the truth.
//
// ErrorCode still reports such an error as CodeInternal, so every door
// that treats an internal error as worth another try keeps doing so;
// Unavailable (with the store's own function) tells the two apart where a
// door has a better answer (the HTTP API's 503 with Retry-After).
var ErrUnavailable = errors.New("the store is unavailable for a moment")

// CodeUnavailable is the code the HTTP API and its probes put on the
// wire with a 503 for an error Unavailable reports; ErrorCode never
// returns it (see ErrUnavailable).
const CodeUnavailable Code = "unavailable"

// Unavailable reports whether err is marked as a store's "not now"
// (ErrUnavailable).
func Unavailable(err error) bool { return errors.Is(err, ErrUnavailable) }

// UnavailableMessage is the caller-safe text for such an error.
const UnavailableMessage = "the store is failing over or unreachable for a moment; try again shortly (a request that was in fact recorded is answered truthfully on its retry)"

// ErrOutcomeUnknown marks the error of a change that was sent to the
// store and whose fate its caller cannot know: the caller's context ended
// (a platform's reply window, a request's deadline) while the store was
// writing, so the write may have landed with its reply lost. The
// chokepoint marks only a Commit cut that way; a read, a check or a
// refusal that fails before anything is sent wrote nothing and is not
// marked, so a door can tell "may or may not be recorded" (this) from
// "not recorded, try again" (the rest) and say the truth of each.
var ErrOutcomeUnknown = errors.New("the change may or may not have been recorded")

// OutcomeUnknown reports whether err is marked as a change of unknown
// fate (ErrOutcomeUnknown).
func OutcomeUnknown(err error) bool { return errors.Is(err, ErrOutcomeUnknown) }
