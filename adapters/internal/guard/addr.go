package guard

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// ClientAddr is the client r came from, as the budgets count it:
// the peer's address, unless the peer is one of the trusted proxies. Then
// it is the right-most address in X-Forwarded-For that is not itself a
// trusted proxy: each proxy appends the address it had the request from,
// so that one was written by a proxy we trust, and everything left of it
// is the client's to invent. A request that came through trusted proxies
// only counts as the left-most address; an entry that is not an address,
// or a chain longer than maxHops, ends the walk at the proxy that passed
// it on, whose address is then used. IPv6 clients count by their /64, the
// least a host is given, so that one cannot take a fresh budget per
// address.
func ClientAddr(r *http.Request, trusted []netip.Prefix) string {
	peer, ok := parseAddr(r.RemoteAddr)
	if !ok {
		host, _, err := net.SplitHostPort(r.RemoteAddr)
		if err != nil {
			return r.RemoteAddr
		}
		return host
	}
	from := peer
	if trustedAddr(peer, trusted) {
		from = forwardedFor(r.Header.Values("X-Forwarded-For"), peer, trusted)
	}
	if from.Is6() {
		return netip.PrefixFrom(from, 64).Masked().String()
	}
	return from.String()
}

// maxHops bounds how far ClientAddr walks X-Forwarded-For, right to left.
const maxHops = 16

// forwardedFor walks the X-Forwarded-For entries in lines from the right,
// from the trusted peer, to the first address that is not trusted.
func forwardedFor(lines []string, peer netip.Addr, trusted []netip.Prefix) netip.Addr {
	from := peer
	hops := 0
	for i := len(lines) - 1; i >= 0; i-- {
		rest := lines[i]
		for rest != "" {
			entry := rest
			if j := strings.LastIndexByte(rest, ','); j >= 0 {
				entry, rest = rest[j+1:], rest[:j]
			} else {
				rest = ""
			}
			entry = strings.TrimSpace(entry)
			if entry == "" && rest != "" {
				continue // "a,,b": an empty item says nothing
			}
			hops++
			a, ok := parseAddr(entry)
			if !ok || hops > maxHops {
				return from
			}
			from = a
			if !trustedAddr(a, trusted) {
				return from
			}
		}
	}
	return from
}

// parseAddr reads an IP address, with or without a port, IPv4 mapped into
// IPv6 read as IPv4, and any zone dropped (it names an interface of the
// host that wrote it, not another client).
func parseAddr(s string) (netip.Addr, bool) {
	a, err := netip.ParseAddr(s)
	if err != nil {
		ap, err := netip.ParseAddrPort(s)
		if err != nil {
			return netip.Addr{}, false
		}
		a = ap.Addr()
	}
	return a.Unmap().WithZone(""), true
}

func trustedAddr(a netip.Addr, trusted []netip.Prefix) bool {
	for _, p := range trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// ParseProxies reads a list of trusted proxies: addresses or CIDR
// prefixes, separated by commas or spaces ("10.0.1.5, 192.0.2.0/28"). A
// prefix with bits set past its length ("10.1.2.3/8") is refused rather
// than widened, as is a zone ("fe80::1%eth0"); IPv4 written in IPv6
// ("::ffff:10.0.0.0/104") is read as IPv4.
func ParseProxies(list string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.FieldsFunc(list, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' }) {
		if strings.Contains(f, "%") {
			return nil, fmt.Errorf("%q has a zone: name the address or prefix alone", f)
		}
		if p, err := netip.ParsePrefix(f); err == nil {
			if p != p.Masked() {
				return nil, fmt.Errorf("%q has bits set past its length: did you mean %s?", f, p.Masked())
			}
			if a := p.Addr(); a.Is4In6() && p.Bits() >= 96 {
				p = netip.PrefixFrom(a.Unmap(), p.Bits()-96)
			}
			out = append(out, p)
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil {
			return nil, fmt.Errorf("%q is neither an IP address nor a CIDR prefix such as 10.0.0.0/8", f)
		}
		a = a.Unmap()
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}
