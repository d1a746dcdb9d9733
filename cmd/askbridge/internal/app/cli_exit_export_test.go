package app

// The exit codes the external tests of the CLI's failures need.
const (
	ExitTimedOut    = exitTimedOut
	ExitExpired     = exitExpired
	ExitCancelled   = exitCancelled
	ExitUnreachable = exitUnreachable
	ExitRefused     = exitRefused
)

// LiveURL is the URL healthcheck --live asks for a server on addr.
var LiveURL = liveURL
