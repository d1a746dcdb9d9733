// Package addressfault tells a failure to reach a server at a wrong
// address, which no retry mends, from an outage, which a retry rides
// out. The API client (adapters/httpapi/client) stops retrying on it, and
// the MCP adapter tells its caller which setting to fix; both read it
// here, so neither adapter imports the other (DESIGN.md: dependencies
// point inwards).
package addressfault

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
)

// response is a server's answer other than success, as plain values (the
// API client's *Error has it): read through a method so that this
// package imports no adapter.
type response interface {
	error
	Response() (status int, code, message string)
}

// Of says what is wrong with the address a call went to ("it" in the
// words), when err shows a fault that trying again never mends, or "": a
// host that DNS answers does not exist (a lookup that timed out or failed
// is an outage), or a server that does not speak the scheme the address
// names. Each is a setting to fix; a caller that retried it as an outage
// would retry for ever.
func Of(err error) string {
	if dns, ok := errors.AsType[*net.DNSError](err); ok && dns.IsNotFound {
		return fmt.Sprintf("DNS knows no host %q", dns.Name)
	}
	if errors.Is(err, http.ErrSchemeMismatch) {
		return "it says https://, and the server there speaks plain HTTP"
	}
	if _, ok := errors.AsType[tls.RecordHeaderError](err); ok {
		return "it says https://, and the server there does not speak TLS"
	}
	if r, ok := errors.AsType[response](err); ok && plainAtTLS(r.Response()) {
		return "it says http://, and the server there speaks HTTPS"
	}
	return ""
}

// plainAtTLS reports whether a response is a TLS server's refusal of a
// plain HTTP request: a 400 that is not the API's (no code), in the words
// of Go's server or nginx's page, which alone tell it from any other 400.
func plainAtTLS(status int, code, message string) bool {
	return status == http.StatusBadRequest && code == "" &&
		(strings.Contains(message, "HTTP request to an HTTPS server") || strings.Contains(message, "plain HTTP request was sent to HTTPS port"))
}
