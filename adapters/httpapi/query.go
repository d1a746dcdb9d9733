package httpapi

import (
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// queryProblem checks that a query string parses whole. net/http's
// URL.Query drops a pair it cannot parse (a bad %-escape, a ';', which Go
// no longer reads as a separator) without a word, and the route then runs
// as if the parameter had not been given: an events stream from the
// start, a wait of the default length, an end of the caller's own run
// rather than a refusal of the agent it named. It names the parameter.
func queryProblem(raw string) error {
	for raw != "" {
		var pair string
		pair, raw, _ = strings.Cut(raw, "&")
		key, value, _ := strings.Cut(pair, "=")
		if first, _, semi := strings.Cut(key, ";"); semi || strings.Contains(value, ";") {
			if name, err := url.QueryUnescape(first); err == nil {
				first = name
			}
			return invalid("query parameter %q holds a ';': separate parameters with '&', and write a ';' in a value as %%3B", first)
		}
		name, err := url.QueryUnescape(key)
		if err != nil {
			return invalid("the query has a parameter name that is not validly %%-escaped (write a %% as %%25): %q", key)
		}
		if _, err := url.QueryUnescape(value); err != nil {
			return invalid("query parameter %q is not validly %%-escaped (write a %% as %%25)", name)
		}
	}
	return nil
}

// A param is a query parameter a route takes.
type param struct {
	name string
	// many: the route takes it more than once (the digest's role).
	many bool
	// emptyIsValue: an empty value is one of the parameter's own, as
	// the README writes it (?cursor= is the first page). Any other
	// parameter given empty is refused with ifEmpty.
	emptyIsValue bool
	// ifEmpty finishes "query parameter %q is empty: ": what to give,
	// and what leaving the parameter out does.
	ifEmpty string
}

// queryParams are the query parameters each route of v1 reads, by its
// pattern; a route not here reads none. Any other is refused by name, as
// an unknown body field is: one misspelt or unknown, and ignored, would
// answer another question than the caller asked (?status=closed listed
// the open questions). So is one given empty, unless empty is a value
// of its own: read as left out, it widened the request without a word
// (?route= gave a digest of every route's questions, ?until= one up to
// now, ?since= the whole log, ?timeout= the default wait where 0s was
// meant), as a client that lost a value on the way would never know.
var queryParams = map[string][]param{
	"GET /v1/questions": {
		{name: "state", ifEmpty: "give state=open, or leave it out: only the open questions are listed"},
		{name: "limit", ifEmpty: "give a page size from 1 to " + strconv.Itoa(maxListLimit) + ", or leave it out for " + strconv.Itoa(defaultListLimit)},
		{name: "cursor", emptyIsValue: true},
	},
	"GET /v1/questions/{id}/wait": {
		{name: "timeout", ifEmpty: "give a duration such as 25s (0s answers at once), or leave it out to wait " + DefaultWait.String()},
	},
	"POST /v1/runs/{run_id}/end": {
		{name: "agent", ifEmpty: "name the agent whose run to end, or leave it out to end your own"},
	},
	"GET /v1/events": {
		{name: "since", ifEmpty: "give the event seq to start after, or leave it out to start at the beginning of the log"},
		{name: "follow", ifEmpty: "give true or false, or leave it out to follow the log"},
	},
	"GET /v1/audit/export": {
		{name: "since", ifEmpty: "give the event seq to export after, or leave it out to export from the start"},
	},
	"GET /v1/digest": {
		{name: "since", ifEmpty: "give an RFC 3339 time such as 2026-01-02T15:04:05Z: it is required"},
		{name: "until", ifEmpty: "give an RFC 3339 time, or leave it out for up to now"},
		{name: "decider", ifEmpty: "name one as surface:id, or leave it out for every decider's questions"},
		{name: "role", many: true, ifEmpty: "name a role the decider holds, or leave it out"},
		{name: "person", ifEmpty: "name a configured person, or leave it out for everyone's questions"},
		{name: "route", ifEmpty: "name a configured route, or leave it out for every route's questions"},
	},
	"GET /v1/directive": {
		{name: "autonomy", ifEmpty: "give the agent's autonomy level: it is required"},
		{name: "tier", ifEmpty: "give a tier, or leave it out for the full text"},
		{name: "role", ifEmpty: "name the agent's role, or leave it out for no role's extras"},
		{name: "department", ifEmpty: "name the agent's department, or leave it out for no department's extras"},
	},

	"GET /v1/questions/{id}/mcp/decline": {
		{name: "key", ifEmpty: "give the key of the task's form, as its inputRequests name it: it is required"},
	},
}

// paramProblem refuses the first parameter of q, in name order, that
// known does not list, that is given more than once without being one
// of many (the first value won and the rest were dropped without a
// word: an admin's end of ?agent=b&agent=c ended b's run alone), or that
// is given empty where empty is not one of its values.
func paramProblem(q url.Values, known []param) error {
	for _, name := range slices.Sorted(maps.Keys(q)) {
		i := slices.IndexFunc(known, func(p param) bool { return p.name == name })
		switch {
		case i < 0 && len(known) == 0:
			return invalid("query parameter %q: this route takes none", name)
		case i < 0:
			names := make([]string, len(known))
			for j, p := range known {
				names[j] = p.name
			}
			return invalid("unknown query parameter %q: this route takes %s", name, strings.Join(names, ", "))
		case len(q[name]) > 1 && !known[i].many:
			return invalid("query parameter %q is given %d times: it takes one value", name, len(q[name]))
		case slices.Contains(q[name], "") && !known[i].emptyIsValue:
			return invalid("query parameter %q is empty: %s", name, known[i].ifEmpty)
		}
	}
	return nil
}
