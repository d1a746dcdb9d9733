package app_test

import (
	"bytes"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
	"github.com/askbridge/askbridge/core"
	"github.com/rs/zerolog"
)

// TestOneWayRecipients: a route's email and ntfy recipients become its
// rooms (a person's own for person: and group: entries), a person's
// address and topic are their ids on those surfaces, and every bad entry
// stops the load naming its key.
func TestOneWayRecipients(t *testing.T) {
	const good = `
people:
  alice: {name: Alice, email: Alice@Example.com, ntfy: alice-phone}
  bob: {email: bob@example.com}
groups:
  leads: [alice, bob]
routes:
  infra:
    email: [ops@example.com, "group:leads", "person:alice"]
    ntfy: [infra-approvals, "person:alice"]
    deciders: {email: [OPS@example.com]}
    people: ["person:alice"]
`
	f, err := app.ParseFile([]byte(good), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	// People stay named in the rooms: core looks them up whenever a card
	// goes out (below).
	want := []core.Room{{Surface: core.SurfaceEmail, ID: "ops@example.com"}, {Surface: core.SurfaceEmail, ID: "group:leads"},
		{Surface: core.SurfaceEmail, ID: "person:alice"}, {Surface: core.SurfaceNtfy, ID: "infra-approvals"}, {Surface: core.SurfaceNtfy, ID: "person:alice"}}
	if got := f.Routes["infra"].Rooms; !slices.Equal(got, want) {
		t.Fatalf("rooms %+v, want %+v", got, want)
	}
	cfg := app.Settings{File: f}.CoreConfig([]byte("key of sixteen bytes"))
	if p := cfg.People["alice"]; p.IDs[core.SurfaceEmail][0] != "alice@example.com" || p.IDs[core.SurfaceNtfy][0] != "alice-phone" {
		t.Fatalf("alice's ids %+v", p.IDs)
	}
	if d := cfg.Routes["infra"].Deciders[core.SurfaceEmail]; d[0] != "ops@example.com" {
		t.Fatalf("deciders %v: addresses are compared in lower case", d)
	}
	svc, err := core.New(nil, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	posts := []core.Room{{Surface: core.SurfaceEmail, ID: "ops@example.com"}, {Surface: core.SurfaceEmail, ID: "alice@example.com"},
		{Surface: core.SurfaceEmail, ID: "bob@example.com"}, {Surface: core.SurfaceNtfy, ID: "infra-approvals"}, {Surface: core.SurfaceNtfy, ID: "alice-phone"}}
	if got := svc.Routes()[0].Posts(); !slices.Equal(got, posts) {
		t.Fatalf("cards go to %+v, want %+v", got, posts)
	}
	for bad, key := range map[string]string{
		"routes: {r: {email: [not-an-address]}}":                             "routes.r.email[0]",
		"routes: {r: {email: [\"Ops <ops@example.com>\"]}}":                  "routes.r.email[0]",
		"routes: {r: {email: [\"person:nobody\"]}}":                          "routes.r.email[0]",
		"routes: {r: {email: [\"group:none\"]}}":                             "routes.r.email[0]",
		"people: {bob: {slack: U1}}\nroutes: {r: {email: [\"person:bob\"]}}": "routes.r.email[0]",
		"routes: {r: {ntfy: [\"a topic\"]}}":                                 "routes.r.ntfy[0]",
		"people: {bob: {email: bob}}":                                        "people.bob.email",
		"people: {bob: {ntfy: \"bob/phone\"}}":                               "people.bob.ntfy",
	} {
		if _, err := app.ParseFile([]byte(bad), func(string) string { return "" }); err == nil || !strings.HasPrefix(err.Error(), key) {
			t.Errorf("%s: %v, want an error naming %s", bad, err, key)
		}
	}
}

// TestOneWaySettings: the doors need the public URL their links point
// at, a sender and a known TLS mode; and they open from the settings.
func TestOneWaySettings(t *testing.T) {
	base := map[string]string{"EMAIL_SMTP_HOST": "smtp.example.com", "EMAIL_FROM": "askbridge@example.com",
		"ASKBRIDGE_PUBLIC_URL": "https://bridge.example.com", "NTFY_URL": "https://ntfy.example.com"}
	s := apptest.FromEnv(t, base)
	if s.Email.TLS != "starttls" || s.PublicURL != "https://bridge.example.com" {
		t.Fatalf("settings %+v", s.Email)
	}
	for key, v := range map[string]string{"ASKBRIDGE_PUBLIC_URL": "", "EMAIL_FROM": "nobody", "EMAIL_SMTP_TLS": "maybe",
		"EMAIL_SMTP_PORT": "70000", "EMAIL_SMTP_PASSWORD": "secret", "NTFY_URL": "ntfy.example.com"} {
		env := map[string]string{}
		for k, v := range base {
			env[k] = v
		}
		env[key] = v
		if _, err := app.LoadSettings(func(k string) string { return env[k] }); err == nil || !strings.HasPrefix(err.Error(), key+":") {
			t.Errorf("%s=%q: %v", key, v, err)
		}
	}
	s.ActorKey = "actor key of the test, long enough"
	for _, open := range []app.ChatOpener{app.OpenEmail, app.OpenNtfy} {
		a, err := open(t.Context(), s, nil, nil, zerolog.Nop())
		if err != nil || a == nil {
			t.Fatalf("open: %v, %v", a, err)
		}
	}
}

// TestREADMEOneWayConfigLoads keeps the email and ntfy examples honest.
func TestREADMEOneWayConfigLoads(t *testing.T) {
	raw, err := os.ReadFile("../../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for heading, want := range map[string]core.Room{
		"### Email":                   {Surface: core.SurfaceEmail, ID: "carol@example.com"},
		"### ntfy: push to the phone": {Surface: core.SurfaceNtfy, ID: "dave-approvals-7f3k"},
	} {
		_, rest, ok := strings.Cut(string(raw), "\n"+heading+"\n")
		_, rest, ok2 := strings.Cut(rest, "```yaml\n")
		example, _, ok3 := strings.Cut(rest, "```")
		if !ok || !ok2 || !ok3 {
			t.Fatalf("the README has no example under %s", heading)
		}
		f, err := app.ParseFile([]byte(example), func(string) string { return "" })
		if err != nil {
			t.Fatalf("%s: %v", heading, err)
		}
		svc, err := core.New(nil, app.Settings{File: f}.CoreConfig([]byte("key of sixteen bytes")), nil)
		if err != nil {
			t.Fatalf("%s: %v", heading, err)
		}
		if r, _ := svc.Route("infra"); !slices.Contains(r.Posts(), want) {
			t.Fatalf("%s: cards go to %+v, not %+v", heading, r.Posts(), want)
		}
	}
}

// TestAPortThatIsNoNumber: EMAIL_SMTP_PORT=587x stops serve with an error
// naming the variable (before: `parse error on field "Port"`), and does
// not stop a client command, which reads none of the server's settings.
func TestAPortThatIsNoNumber(t *testing.T) {
	env := map[string]string{"EMAIL_SMTP_HOST": "smtp.example.com", "EMAIL_FROM": "askbridge@example.com",
		"ASKBRIDGE_PUBLIC_URL": "https://bridge.example.com", "EMAIL_SMTP_PORT": "587x"}
	if _, err := app.LoadSettings(func(k string) string { return env[k] }); err == nil || !strings.HasPrefix(err.Error(), "EMAIL_SMTP_PORT:") {
		t.Fatalf("EMAIL_SMTP_PORT=587x: %v; want an error naming the variable", err)
	}
	env["EMAIL_SMTP_PORT"] = "2525"
	if s, err := app.LoadSettings(func(k string) string { return env[k] }); err != nil || s.Email.SMTPPort() != 2525 {
		t.Fatalf("EMAIL_SMTP_PORT=2525: port %d, %v", s.Email.SMTPPort(), err)
	}
	m := apptest.Start(t, app.Settings{})
	env = map[string]string{"ASKBRIDGE_URL": m.URL, "ASKBRIDGE_TOKEN": m.AdminToken, "EMAIL_SMTP_PORT": "587x"}
	var out, errb bytes.Buffer
	if c := app.Run(t.Context(), []string{"questions"}, func(k string) string { return env[k] }, nil, &out, &errb); c != 0 {
		t.Fatalf("questions beside a bad EMAIL_SMTP_PORT: exit %d, %s", c, errb.String())
	}
}
