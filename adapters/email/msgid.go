package email

import (
	"fmt"
	"net/mail"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// CheckFrom refuses a sender that is not an address, or whose domain has
// no ASCII form for the Message-IDs (sender), so that a setting is
// refused where it is read, naming it, as New would refuse it at start.
func CheckFrom(from string) error {
	_, _, err := sender(from)
	return err
}

// sender is the sender's address, and the domain its Message-IDs name.
// A msg-id is ASCII alone (RFC 5322, 3.6.4): go-mail encodes a header
// value that is not ASCII as encoded words (RFC 2047), which makes a
// Message-ID, and the In-Reply-To that names it, no msg-id at all, and
// mail clients thread nothing. So a domain that is not ASCII (an IDN) is
// named by its ASCII form (punycode), under IDNA's Lookup profile: the
// sender's domain is one that exists, written as the operator typed it
// (capitals, full-width letters), which Lookup maps as a resolver would
// where Registration refuses it. A domain IDNA refuses (an underscore, a
// label led by a hyphen) is refused here, at start, rather than mailed
// under a header no client reads. An ASCII domain (or address literal)
// is taken as it is, so Message-IDs made before stay the same.
func sender(from string) (*mail.Address, string, error) {
	addr, err := mail.ParseAddress(from)
	if err != nil {
		return nil, "", fmt.Errorf("email: the sender %q is not an address: %w", from, err)
	}
	domain := addr.Address[strings.LastIndexByte(addr.Address, '@')+1:]
	if ascii(domain) {
		return addr, domain, nil
	}
	// ToASCII hands back a partial form with its error: only the error
	// counts.
	a, err := idna.Lookup.ToASCII(domain)
	if err != nil {
		return nil, "", fmt.Errorf("email: the sender's domain %q has no ASCII form (IDNA), which its Message-IDs need: %w", domain, err)
	}
	return addr, a, nil
}

// ascii reports whether s is ASCII throughout.
func ascii(s string) bool {
	for i := range len(s) {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
