package hooks

import (
	"net/url"
	"slices"
	"time"
)

// emptyParam refuses the first query parameter the door reads (route,
// then wait) that is given with no value, even beside a value (?route=&
// route=ops, whose first is read), naming it, as the API refuses one.
// Read as left out, an empty ?route= asked on the default route, under
// its policies and deciders rather than those of the route the operator
// meant, and an empty ?wait= waited the longest: a hook setting that
// lost its value on the way would never know. maxWait is the door's.
func emptyParam(q url.Values, maxWait time.Duration) error {
	for _, p := range []struct{ name, ifEmpty string }{
		{"route", "name a configured route, or leave it out for the default route"},
		{"wait", "give a duration such as 25s, a little under the hook's own timeout, or leave it out to wait " + maxWait.String()},
	} {
		if slices.Contains(q[p.name], "") {
			return invalid("query parameter %q is empty: %s", p.name, p.ifEmpty)
		}
	}
	return nil
}
