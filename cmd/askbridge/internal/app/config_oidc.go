package app

import (
	"fmt"
	"net/url"
	"strings"
	"sync/atomic"

	"github.com/askbridge/askbridge/adapters/console"
	"github.com/askbridge/askbridge/core"
)

// OIDCFile turns on the console's sign-in through the company's OpenID
// Connect provider (the YAML file's oidc section). Token sign-in stays.
type OIDCFile struct {
	Issuer   string `yaml:"issuer"`
	ClientID string `yaml:"client_id"`
	// The client secret, inline or (better) named by an environment
	// variable, as tokens are.
	ClientSecret    Secret `yaml:"client_secret"`
	ClientSecretEnv string `yaml:"client_secret_env"`
	// RedirectURL is the console's /oidc/callback as browsers reach it.
	RedirectURL string   `yaml:"redirect_url"`
	Scopes      []string `yaml:"scopes"`
	// PersonClaim names the ID token claim that says who signed in:
	// "email" (the default, verified emails only) matches people's email,
	// any other claim matches their oidc key.
	PersonClaim string `yaml:"person_claim"`
	// GroupClaim lists the person's groups ("groups" by default); Roles
	// maps a group to observer, operator or admin (the strongest wins);
	// DefaultRole is for someone in none of them, "" refusing them.
	GroupClaim  string            `yaml:"group_claim"`
	Roles       map[string]string `yaml:"roles"`
	DefaultRole string            `yaml:"default_role"`
	// Label is the sign-in button's text.
	Label string `yaml:"label"`
}

// checkOIDC checks the oidc section, takes its secret from the
// environment, and checks that every person's claim value is theirs
// alone. A token's name may not look like a person signed in through it.
func checkOIDC(f *File, getenv func(string) string) error {
	for i, t := range f.Tokens {
		if strings.HasPrefix(t.Name, "oidc:") {
			return fmt.Errorf("tokens[%d].name: %q: names starting with oidc: are kept for people who sign in through the identity provider", i, t.Name)
		}
	}
	o := f.OIDC
	if o == nil {
		for _, name := range inOrder(f.People) {
			if f.People[name].OIDC != "" {
				return fmt.Errorf("people.%s.oidc: set, but there is no oidc section", name)
			}
		}
		return nil
	}
	if err := o.checkProvider(getenv); err != nil {
		return err
	}
	if err := o.checkRoles(); err != nil {
		return err
	}
	seen := map[string]string{}
	for _, name := range inOrder(f.People) {
		v := o.claimOf(f.People[name])
		if v == "" {
			continue
		}
		if other, ok := seen[v]; ok {
			return fmt.Errorf("people: %s %q is claimed by both %q and %q", o.claim(), v, other, name)
		}
		seen[v] = name
	}
	return nil
}

// checkProvider checks how the console reaches the identity provider and
// comes back from it, and takes the client secret from the environment
// when the section names a variable.
func (o *OIDCFile) checkProvider(getenv func(string) string) error {
	if err := checkProviderURL(o.Issuer, false); err != nil {
		return fmt.Errorf("oidc.issuer: %w", err)
	}
	if o.ClientID == "" {
		return fmt.Errorf("oidc.client_id is required")
	}
	switch {
	case o.ClientSecret != "" && o.ClientSecretEnv != "":
		return fmt.Errorf("oidc: give client_secret or client_secret_env, not both")
	case o.ClientSecretEnv != "":
		v, err := secretFromEnv("oidc.client_secret_env", o.ClientSecretEnv, getenv)
		if err != nil {
			return err
		}
		o.ClientSecret = v
	case o.ClientSecret == "":
		return fmt.Errorf("oidc: client_secret or client_secret_env is required")
	}
	if err := checkProviderURL(o.RedirectURL, true); err != nil {
		return fmt.Errorf("oidc.redirect_url: %w", err)
	}
	return nil
}

// checkRoles checks that the groups' roles, and the default, are console
// roles, and that someone gets one.
func (o *OIDCFile) checkRoles() error {
	for _, group := range inOrder(o.Roles) {
		if role := o.Roles[group]; !consoleRole(role) {
			return fmt.Errorf("oidc.roles.%s: %q is not observer, operator or admin", group, role)
		}
	}
	if o.DefaultRole != "" && !consoleRole(o.DefaultRole) {
		return fmt.Errorf("oidc.default_role: %q is not observer, operator or admin", o.DefaultRole)
	}
	if len(o.Roles) == 0 && o.DefaultRole == "" {
		return fmt.Errorf("oidc: roles (or default_role) must give someone a console role")
	}
	return nil
}

func consoleRole(r string) bool {
	switch console.Role(r) {
	case console.RoleObserver, console.RoleOperator, console.RoleAdmin:
		return true
	}
	return false
}

// checkProviderURL wants https, or http on a loopback address (a provider
// or a console on the same machine); callback, that it is the console's
// /oidc/callback.
func checkProviderURL(raw string, callback bool) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return fmt.Errorf("%q is not an absolute URL", raw)
	}
	if u.Scheme != "https" && !(u.Scheme == "http" && loopbackHost(u.Hostname())) {
		return fmt.Errorf("%q: https is required (http only on a loopback address)", raw)
	}
	if callback && u.Path != "/oidc/callback" {
		return fmt.Errorf("%q: the path must be /oidc/callback", raw)
	}
	return nil
}

func (o *OIDCFile) claim() string {
	if o.PersonClaim == "" {
		return "email"
	}
	return o.PersonClaim
}

// claimOf is the value of the person claim that names p: their email
// (in lower case) for the email claim unless their oidc key says
// otherwise, else their oidc key.
func (o *OIDCFile) claimOf(p PersonFile) string {
	if o.claim() != "email" {
		return p.OIDC
	}
	if p.OIDC != "" {
		return strings.ToLower(p.OIDC)
	}
	return strings.ToLower(p.Email)
}

// addAccounts gives every person the console account a sign-in through
// the provider acts as, oidc:<name>, so that core names the person
// behind every answer given that way. Without an oidc section it does
// nothing.
func (o *OIDCFile) addAccounts(people map[string]core.Person) {
	if o == nil {
		return
	}
	for name, p := range people {
		p.IDs[core.SurfaceConsole] = append(p.IDs[core.SurfaceConsole], "oidc:"+name)
		people[name] = p
	}
}

// oidcPeople finds people by their claim value, for the console. A
// reloaded file replaces them whole (replace), so a person added signs
// in, and a person removed is signed out, without a restart.
type oidcPeople struct{ live atomic.Pointer[oidcIndex] }

// oidcIndex is one file's people: by claim value, and by name.
type oidcIndex struct {
	byClaim map[string]string
	people  map[string]bool
}

func (p *oidcPeople) ByClaim(v string) (string, bool) {
	name, ok := p.live.Load().byClaim[v]
	return name, ok
}

func (p *oidcPeople) Exists(name string) bool { return p.live.Load().people[name] }

// replace puts f's people in force, found by o's claim.
func (p *oidcPeople) replace(o *OIDCFile, people map[string]PersonFile) {
	ix := &oidcIndex{byClaim: map[string]string{}, people: map[string]bool{}}
	for name, person := range people {
		ix.people[name] = true
		if v := o.claimOf(person); v != "" {
			ix.byClaim[v] = name
		}
	}
	p.live.Store(ix)
}

// console is the section as the console takes it, finding people through
// pp (filled here from people); nil without one.
func (o *OIDCFile) console(people map[string]PersonFile, pp *oidcPeople) *console.OIDC {
	if o == nil {
		return nil
	}
	pp.replace(o, people)
	roles := make(map[string]console.Role, len(o.Roles))
	for g, r := range o.Roles {
		roles[g] = console.Role(r)
	}
	return &console.OIDC{Issuer: o.Issuer, ClientID: o.ClientID, ClientSecret: o.ClientSecret.Reveal(), RedirectURL: o.RedirectURL,
		Scopes: o.Scopes, PersonClaim: o.PersonClaim, GroupClaim: o.GroupClaim, Roles: roles,
		DefaultRole: console.Role(o.DefaultRole), People: pp, Label: o.Label}
}
