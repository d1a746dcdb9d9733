package console

import (
	"net/netip"

	"github.com/askbridge/askbridge/adapters/internal/guard"
)

// ParseProxies reads a list of trusted proxies, addresses or CIDR
// prefixes ("10.0.1.5, 192.0.2.0/28"), as guard.ParseProxies does. Which
// client a request is counted as is guard.ClientAddr's reading, the same
// for the sign-in and for the API's budget of wrong tokens (httpapi's
// Options.TrustedProxies takes the same list).
func ParseProxies(list string) ([]netip.Prefix, error) { return guard.ParseProxies(list) }
