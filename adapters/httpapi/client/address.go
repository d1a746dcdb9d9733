package client

import (
	"errors"
	"net"

	"github.com/askbridge/askbridge/adapters/internal/addressfault"
)

// AddressFault says what is wrong with the address a call went to (the
// client's base URL, "it" in the words), when err shows a fault that
// trying again never mends, or "": a host that DNS answers does not
// exist (a lookup that timed out or failed is an outage), or a server
// that does not speak the scheme the address names. Each is a setting to
// fix; a caller that retried it as an outage would retry for ever. The
// classification lives in adapters/internal/addressfault, shared with
// the MCP adapter, which reads an *Error through its Response method.
func AddressFault(err error) string { return addressfault.Of(err) }

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
