package guard

import (
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
)

func TestClientAddr(t *testing.T) {
	trusted, err := ParseProxies("10.0.0.0/8, 192.0.2.7 ::1")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, peer string
		xff        []string
		trusted    []netip.Prefix
		want       string
	}{
		{"a peer that is no proxy", "198.51.100.4:5000", []string{"203.0.113.9"}, trusted, "198.51.100.4"},
		{"no proxies trusted", "10.1.2.3:5000", []string{"203.0.113.9"}, nil, "10.1.2.3"},
		{"one trusted proxy", "10.1.2.3:5000", []string{"203.0.113.9"}, trusted, "203.0.113.9"},
		{"the client's own entries are skipped", "10.1.2.3:5000", []string{"1.1.1.1, 203.0.113.9"}, trusted, "203.0.113.9"},
		{"two trusted proxies", "10.1.2.3:5000", []string{"203.0.113.9, 192.0.2.7"}, trusted, "203.0.113.9"},
		{"header lines in order", "10.1.2.3:5000", []string{"1.1.1.1", "203.0.113.9"}, trusted, "203.0.113.9"},
		{"only trusted hops", "10.1.2.3:5000", []string{"10.9.9.9"}, trusted, "10.9.9.9"},
		{"no header", "10.1.2.3:5000", nil, trusted, "10.1.2.3"},
		{"garbage stops at the proxy", "10.1.2.3:5000", []string{"203.0.113.9, not-an-address"}, trusted, "10.1.2.3"},
		{"an entry with a port", "10.1.2.3:5000", []string{"203.0.113.9:443"}, trusted, "203.0.113.9"},
		{"an IPv6 client counts by its /64", "[::1]:5000", []string{"2001:db8::5"}, trusted, "2001:db8::/64"},
		{"another address in that /64", "[2001:db8::77]:5000", nil, trusted, "2001:db8::/64"},
		{"IPv4 mapped in IPv6", "[::ffff:10.1.2.3]:5000", []string{"203.0.113.9"}, trusted, "203.0.113.9"},
		{"a zone names no other client", "10.1.2.3:5000", []string{"fe80::1%a"}, trusted, "fe80::/64"},
		{"empty items say nothing", "10.1.2.3:5000", []string{"203.0.113.9,, 10.0.0.1,"}, trusted, "203.0.113.9"},
		{"past maxHops the walk stops", "10.1.2.3:5000", []string{"203.0.113.9" + strings.Repeat(", 10.0.0.1", maxHops)}, trusted, "10.0.0.1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/signin", nil)
			r.RemoteAddr = tt.peer
			for _, v := range tt.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			if got := ClientAddr(r, tt.trusted); got != tt.want {
				t.Fatalf("ClientAddr = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestParseProxies(t *testing.T) {
	got, err := ParseProxies(" 10.0.0.0/8,192.0.2.7\t2001:db8::/32,,  ::ffff:10.1.0.0/112 ")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"10.0.0.0/8", "192.0.2.7/32", "2001:db8::/32", "10.1.0.0/16"}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i].String() != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
	if p, err := ParseProxies(""); err != nil || len(p) != 0 {
		t.Fatalf("empty: %v, %v", p, err)
	}
	for _, bad := range []string{"10.0.0.0/33", "proxy.internal", "10.0.0", "10.0.0.0/8, nope", "10.1.2.3/8", "fe80::1%eth0", "fe80::1%eth0/64"} {
		if _, err := ParseProxies(bad); err == nil {
			t.Errorf("%q was accepted", bad)
		}
	}
}
