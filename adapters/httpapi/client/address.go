package client

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
)

// AddressFault says what is wrong with the address a call went to (the
// client's base URL, "it" in the words), when err shows a fault that
// trying again never mends, or "": a host that DNS answers does not
// exist (a lookup that timed out or failed is an outage), or a server
// that does not speak the scheme the address names. Each is a setting to
// fix; a caller that retried it as an outage would retry for ever.
func AddressFault(err error) string {
	if dns, ok := errors.AsType[*net.DNSError](err); ok && dns.IsNotFound {
		return fmt.Sprintf("DNS knows no host %q", dns.Name)
	}
	if errors.Is(err, http.ErrSchemeMismatch) {
		return "it says https://, and the server there speaks plain HTTP"
	}
	if _, ok := errors.AsType[tls.RecordHeaderError](err); ok {
		return "it says https://, and the server there does not speak TLS"
	}
	if e, ok := errors.AsType[*Error](err); ok && plainAtTLS(e) {
		return "it says http://, and the server there speaks HTTPS"
	}
	return ""
}

// plainAtTLS reports whether e is a TLS server's refusal of a plain HTTP
// request: a 400 that is not the API's, in the words of Go's server or
// nginx's page, which alone tell it from any other 400.
func plainAtTLS(e *Error) bool {
	return e.Status == http.StatusBadRequest && e.Code == "" &&
		(strings.Contains(e.Message, "HTTP request to an HTTPS server") || strings.Contains(e.Message, "plain HTTP request was sent to HTTPS port"))
}

// misaddressed reports whether err, a call's failure, is an address fault
// (AddressFault) that no retry mends, so Ask, GetRetried, Wait and
// Follow end at once. A host DNS stops knowing after the server
// answered at it is not one: the address was right, and the name is
// gone only while the server is (a compose service's, while its
// container restarts), an outage ridden out as a refused connection is.
func (c *Client) misaddressed(err error) bool {
	if AddressFault(err) == "" {
		return false
	}
	_, lookup := errors.AsType[*net.DNSError](err)
	return !lookup || !c.reached.Load()
}
