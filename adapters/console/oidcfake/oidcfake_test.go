package oidcfake_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/coreos/go-oidc/v3/oidc"

	"github.com/askbridge/askbridge/adapters/console/oidcfake"
)

// TestDiscoveryHasWhatTheSpecRequires: the metadata holds every member
// OpenID Connect Discovery 1.0 requires (SOURCES.md), with RS256 among
// the signing algorithms, and go-oidc reads it as a provider's.
func TestDiscoveryHasWhatTheSpecRequires(t *testing.T) {
	p, err := oidcfake.New("client", "secret-0123456789")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	resp, err := http.Get(p.URL + "/.well-known/openid-configuration")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var meta map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&meta); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"issuer", "authorization_endpoint", "token_endpoint", "jwks_uri",
		"response_types_supported", "subject_types_supported", "id_token_signing_alg_values_supported"} {
		if meta[k] == nil {
			t.Errorf("the metadata lacks %s", k)
		}
	}
	algs, _ := meta["id_token_signing_alg_values_supported"].([]any)
	if !slices.Contains(algs, any("RS256")) || meta["issuer"] != p.URL {
		t.Fatalf("metadata: %v", meta)
	}
	prov, err := oidc.NewProvider(t.Context(), p.URL)
	if err != nil {
		t.Fatal(err)
	}
	if prov.Endpoint().TokenURL != p.URL+"/token" || prov.Endpoint().AuthURL != p.URL+"/authorize" {
		t.Fatalf("go-oidc reads %+v", prov.Endpoint())
	}
	keys, err := http.Get(p.URL + "/jwks")
	if err != nil {
		t.Fatal(err)
	}
	defer keys.Body.Close()
	var set struct {
		Keys []map[string]any `json:"keys"`
	}
	if err := json.NewDecoder(keys.Body).Decode(&set); err != nil || len(set.Keys) != 1 {
		t.Fatalf("key set: %v %v", set, err)
	}
	for _, k := range []string{"kty", "kid", "use", "alg", "n", "e"} {
		if set.Keys[0][k] == nil {
			t.Errorf("the key lacks %s", k)
		}
	}
}
