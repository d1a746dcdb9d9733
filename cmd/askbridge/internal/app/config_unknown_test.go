package app_test

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
)

// goType is how the decoder names the Go type a key was not found in
// ("in type app.RouteFile", "directive.Extra"): nothing an operator wrote.
var goType = regexp.MustCompile(`\btype\b|\b(app|core|directive)\.[A-Z]`)

// TestUnknownKeyNamesItsPath: a key the file's sections do not have is
// refused naming its line and its YAML path, in every section, at any
// depth, and where one line (a flow mapping) or one anchor (used twice,
// or merged) holds several; a key not spelt as the file's keys are is
// still not shown, but where it stands is. Before, the error named the Go type it was not found in
// ("field escalate_too not found in type app.RouteFile"), which says
// neither which route nor which of its rooms or rules.
func TestUnknownKeyNamesItsPath(t *testing.T) {
	none := func(string) string { return "" }
	for _, c := range []struct {
		name, yaml string
		want       []string
	}{
		{"a route's", "routes:\n  a:\n    escalate_too: b\n", []string{"line 3: field escalate_too not found in routes.a"}},
		{"a room's", "routes:\n  a:\n    deciders: {api: ['*']}\n    rooms:\n      - {surface: slack, id: C1}\n      - {surface: slack, idd: C2}\n",
			[]string{"line 6: field idd not found in routes.a.rooms[1]"}},
		{"a rule's", "routes:\n  a:\n    deciders: {api: ['*']}\n    rules:\n      - when: 'true'\n        decison: allow\n",
			[]string{"line 6: field decison not found in routes.a.rules[0]"}},
		{"a person's", "people:\n  alice:\n    slak: U1\n", []string{"line 3: field slak not found in people.alice"}},
		{"a token's", "tokens:\n  - {name: a, role: agent, token: abcdefghijklmnopq}\n  - name: b\n    rolee: agent\n",
			[]string{"line 4: field rolee not found in tokens[1]"}},
		{"the policies'", "policies:\n  retension: 30d\n", []string{"line 2: field retension not found in policies"}},
		{"the webhooks'", "webhooks:\n  alow: []\n", []string{"line 2: field alow not found in webhooks"}},
		{"the oidc section's", "oidc:\n  isuer: https://login.example.com\n", []string{"line 2: field isuer not found in oidc"}},
		{"a directive's", "directives:\n  - id: x\n    txt: ask first\n", []string{"line 3: field txt not found in directives[0]"}},
		{"the top level's", "routes: {}\nrotes: {}\n", []string{"line 2: field rotes not found at the top level"}},
		{"several on one line", "routes: {a: {deny: veto, foo: 1, rooms: [{surface: slack, id: C1, deny: x}]}, b: {foo: 2}}\n",
			[]string{"line 1: field foo not found in routes.a", "line 1: field deny not found in routes.a.rooms[0]", "line 1: field foo not found in routes.b"}},
		{"one anchor used twice", "routes:\n  a: &r\n    deciders: {api: ['*']}\n    escalate_too: a\n  b: *r\n",
			[]string{"line 4: field escalate_too not found in routes.a", "line 4: field escalate_too not found in routes.b"}},
		{"an anchor merged", "routes:\n  a: &r\n    deciders: {api: ['*']}\n    escalate_too: b\n  b:\n    <<: *r\n    deny: veto\n    remind_evry: 1h\n",
			[]string{"line 4: field escalate_too not found in routes.a", "line 8: field remind_evry not found in routes.b", "line 4: field escalate_too not found in routes.b"}},
		{"a secret written without its key", "tokens:\n  - {name: ci, role: agent, sk-live-9f2cA7b1E4d8}\n",
			[]string{"line 2: an unknown key (not shown: it is not spelt as the file's keys are, and may be a secret written without its key) in tokens[0]"}},
		{"a secret written at the top level", "sk-live-9f2cA7b1E4d8: x\n",
			[]string{"line 1: an unknown key (not shown: it is not spelt as the file's keys are, and may be a secret written without its key) at the top level"}},
	} {
		_, err := app.ParseFile([]byte(c.yaml), none)
		if err == nil {
			t.Errorf("%s: the file was taken; want %q", c.name, c.want)
			continue
		}
		msg := err.Error()
		// The decoder's errors, one a line, in the order it met them.
		if got := strings.Split(msg, "\n  ")[1:]; !slices.Equal(got, c.want) {
			t.Errorf("%s: %q; want the errors %q", c.name, got, c.want)
		}
		if goType.MatchString(msg) {
			t.Errorf("%s: %q names a Go type", c.name, msg)
		}
		if strings.Contains(msg, "9f2cA7b1") {
			t.Errorf("%s: %q shows the secret", c.name, msg)
		}
	}
}
