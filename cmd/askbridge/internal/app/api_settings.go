package app

import (
	"fmt"
	"strconv"

	"github.com/askbridge/askbridge/adapters/httpapi"
)

// APISettings are the HTTP API's own limits. The API is built once, at
// start, so they are read from the environment with the listen address,
// not from the file a reload reads again.
type APISettings struct {
	// MaxWaitsPerQuestion bounds the waits parked on one question at
	// once on this replica, the API's and /mcp's tool calls each
	// (httpapi.Options and mcp.Options.MaxWaitsPerQuestion); past it an
	// API wait is answered 429 with Retry-After, and a tool call returns
	// at once with the question's state. Unset, httpapi's
	// default: a fan-out of many workers waiting on one question needs
	// more, a small host fewer descriptors at risk.
	MaxWaitsPerQuestion string `env:"ASKBRIDGE_MAX_WAITS_PER_QUESTION"`

	maxWaits int // set by the check, from MaxWaitsPerQuestion; 0 is httpapi's default
}

// maxWaitsCeiling is the largest bound taken. The bound keeps one
// question's waits from taking the process's file descriptors (each
// parked wait holds a connection); past 65536, the descriptors many
// hosts allow a process in all, it keeps nothing, and is more likely a
// digit too many than a choice.
const maxWaitsCeiling = 65536

func (a *APISettings) check() error {
	if a.MaxWaitsPerQuestion == "" {
		return nil
	}
	// 0 is refused rather than read as the default: it could as well
	// have been meant as "no waits" or "no bound".
	n, err := strconv.Atoi(a.MaxWaitsPerQuestion)
	if err != nil || n < 1 || n > maxWaitsCeiling {
		return fmt.Errorf("ASKBRIDGE_MAX_WAITS_PER_QUESTION: %q is not a whole number from 1 to %d (how many waits one question may have parked at once on a replica; unset, %d)",
			a.MaxWaitsPerQuestion, maxWaitsCeiling, httpapi.DefaultMaxWaitsPerQuestion)
	}
	a.maxWaits = n
	return nil
}
