package email

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"
)

// hostname is the machine's name, as the EHLO's default; a variable so
// that tests name the machine as a container or a laptop would.
var hostname = os.Hostname

// heloName is the name every EHLO gives (configured, checked here where
// the setting is read), or the machine's host name when it is one a
// relay takes: fully qualified, and not localhost's. A container's or a
// laptop's bare name, or none, is "": each session then gives its
// connection's own address (heloFor), which RFC 5321 (4.1.4) asks of a
// client without a name, rather than go-mail's default, the bare name,
// which relays that check the EHLO (Postfix's
// reject_non_fqdn_helo_hostname, sendmail's block_bad_helo) refuse, and
// every mail with it. A machine named by an address ("10.0.0.5", no
// domain name) is "" too, rather than that address bracketed: the
// connection's own is the one the relay sees it come from.
func heloName(configured string) (string, error) {
	if configured != "" {
		if err := CheckHELO(configured); err != nil {
			return "", err
		}
		return configured, nil
	}
	name, err := hostname()
	if err != nil || !domainName(name) || !strings.Contains(strings.Trim(name, "."), ".") || local(name) {
		return "", nil
	}
	return strings.TrimSuffix(name, "."), nil
}

// CheckHELO refuses an EHLO name that is neither a domain name nor an
// address literal ("" is none, and fine), so that a setting is refused
// where it is read, naming it. An address written bare ("10.0.0.5") is
// refused too, with the literal to write instead, rather than bracketed
// here: RFC 5321 (4.1.3) takes an address only as a literal, and a
// setting that reads as what is sent is one the operator can match
// against the relay's log.
func CheckHELO(name string) error {
	if name == "" || domainName(name) || addressLiteral(name) {
		return nil
	}
	if ip, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(name, "["), "]")); err == nil && ip.Zone() == "" {
		return fmt.Errorf("email: the EHLO name %q is an address, which an EHLO gives as an address literal in brackets: write %q", name, literal(ip))
	}
	return fmt.Errorf("email: the EHLO name %q is neither a domain name nor an address literal in brackets", name)
}

// local reports whether name is this machine's loopback name, which
// every machine has and so names none.
func local(name string) bool {
	first, _, _ := strings.Cut(strings.ToLower(name), ".")
	return first == "localhost"
}

// domainName reports whether s is a domain name as SMTP takes one
// (RFC 5321, 4.1.2: letters, digits and hyphens in dot-separated labels,
// none starting or ending with a hyphen), so it cannot carry another
// command, or a space, into the EHLO. A name whose last label is all
// digits is none (RFC 1123, 2.1; RFC 3696, 2): "10.0.0.5" is an
// address, which an EHLO gives only as a literal (RFC 5321, 4.1.3).
func domainName(s string) bool {
	s = strings.TrimSuffix(s, ".")
	if s == "" || len(s) > 253 || numeric(s[strings.LastIndex(s, ".")+1:]) {
		return false
	}
	for label := range strings.SplitSeq(s, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
				return false
			}
		}
	}
	return true
}

// numeric reports whether label is all digits.
func numeric(label string) bool {
	return label != "" && strings.Trim(label, "0123456789") == ""
}

// addressLiteral reports whether s is an address literal (RFC 5321,
// 4.1.3): "[192.0.2.7]", or "[IPv6:2001:db8::7]".
func addressLiteral(s string) bool {
	inner, ok := strings.CutPrefix(s, "[")
	if inner, ok = strings.CutSuffix(inner, "]"); !ok {
		return false
	}
	if v6, ok := strings.CutPrefix(inner, "IPv6:"); ok {
		ip, err := netip.ParseAddr(v6)
		return err == nil && ip.Is6() && !ip.Is4In6() && ip.Zone() == ""
	}
	ip, err := netip.ParseAddr(inner)
	return err == nil && ip.Is4()
}

// heloFor is the EHLO's name on conn: the configured or the machine's
// (helo), else conn's own address as a literal.
func heloFor(helo string, conn net.Conn) string {
	if helo != "" {
		return helo
	}
	ap, err := netip.ParseAddrPort(conn.LocalAddr().String())
	if err != nil {
		return "[127.0.0.1]" // no TCP address: cannot happen on a dialled TCP connection
	}
	return literal(ap.Addr())
}

// literal is ip as an EHLO gives it (RFC 5321, 4.1.3): "[192.0.2.7]",
// or "[IPv6:2001:db8::7]".
func literal(ip netip.Addr) string {
	ip = ip.Unmap().WithZone("")
	if ip.Is4() {
		return "[" + ip.String() + "]"
	}
	return "[IPv6:" + ip.String() + "]"
}
