package console

import (
	"net/netip"

	"github.com/askbridge/askbridge/adapters/internal/guard"
)

// ParseProxies reads a list of trusted proxies: addresses or CIDR
// prefixes, separated by commas or spaces ("10.0.1.5, 192.0.2.0/28"). A
// prefix with bits set past its length ("10.1.2.3/8") is refused rather
// than widened, as is a zone ("fe80::1%eth0"); IPv4 written in IPv6
// ("::ffff:10.0.0.0/104") is read as IPv4. Which client a request is
// counted as is guard.ClientAddr's reading, the same for the sign-in and
// for the API's budget of wrong tokens (httpapi's Options.TrustedProxies
// takes the same list).
func ParseProxies(list string) ([]netip.Prefix, error) { return guard.ParseProxies(list) }
