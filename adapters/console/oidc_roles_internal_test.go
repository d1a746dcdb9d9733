package console

import (
	"strings"
	"testing"
)

// TestOIDCRolesRefusedInNameOrder: several groups mapped to roles that
// are not are refused for the first group by name, every time.
func TestOIDCRolesRefusedInNameOrder(t *testing.T) {
	c := OIDC{Issuer: "https://login.example.com", ClientID: "askbridge", RedirectURL: "https://askbridge.example.com/oidc/callback",
		People: noPeople{}, Roles: map[string]Role{"sre": "root", "ops": "boss", "dev": "king", "qa": "chief"}}
	for range 30 {
		if _, err := newIDP(c); err == nil || !strings.Contains(err.Error(), `OIDC group "dev" maps to "king"`) {
			t.Fatalf("newIDP: %v; want group dev's refusal", err)
		}
	}
}

// noPeople configures nobody.
type noPeople struct{}

func (noPeople) ByClaim(string) (string, bool) { return "", false }
func (noPeople) Exists(string) bool            { return false }
