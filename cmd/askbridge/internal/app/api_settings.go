package app

import (
	"fmt"
	"strconv"

	"github.com/askbridge/askbridge/adapters/httpapi"
	"github.com/askbridge/askbridge/adapters/mcp"
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

	// MCPMaxSessionsPerCaller bounds the MCP sessions (hosts on
	// 2025-11-25 and earlier) one agent token may hold open at once on
	// this replica (mcp.Options.MaxSessionsPerCaller); past it an opening
	// is answered 429 until one of them ends. Unset, mcp's default: a
	// host killed without closing its sessions leaves them open for a day.
	MCPMaxSessionsPerCaller string `env:"ASKBRIDGE_MCP_MAX_SESSIONS_PER_CALLER"`

	maxWaits    int // set by the check, from MaxWaitsPerQuestion; 0 is httpapi's default
	maxSessions int // set by the check, from MCPMaxSessionsPerCaller; 0 is mcp's default
}

// maxWaitsCeiling is the largest bound taken. The bound keeps one
// question's waits from taking the process's file descriptors (each
// parked wait holds a connection); past 65536, the descriptors many
// hosts allow a process in all, it keeps nothing, and is more likely a
// digit too many than a choice.
const maxWaitsCeiling = 65536

func (a *APISettings) check() (err error) {
	if a.maxWaits, err = bound("ASKBRIDGE_MAX_WAITS_PER_QUESTION", a.MaxWaitsPerQuestion,
		"how many waits one question may have parked at once on a replica", httpapi.DefaultMaxWaitsPerQuestion); err != nil {
		return err
	}
	a.maxSessions, err = bound("ASKBRIDGE_MCP_MAX_SESSIONS_PER_CALLER", a.MCPMaxSessionsPerCaller,
		"how many MCP sessions one agent token may hold open at once on a replica", mcp.DefaultMaxSessionsPerCaller)
	return err
}

// bound reads the whole number 1 to maxWaitsCeiling a setting named name
// holds, 0 when it is unset (its door's default, def, said in the error
// with what, what it bounds). Each such bound keeps what one caller or
// one question holds from taking the process's descriptors, so they share
// the ceiling. 0 is refused rather than read as the default: it could as
// well have been meant as "none" or "no bound".
func bound(name, value, what string, def int) (int, error) {
	if value == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(value)
	if err != nil || n < 1 || n > maxWaitsCeiling {
		return 0, fmt.Errorf("%s: %q is not a whole number from 1 to %d (%s; unset, %d)", name, value, maxWaitsCeiling, what, def)
	}
	return n, nil
}
