package app

import (
	"os"
	"testing"
)

// The configuration files shipped in deploy/ load with the server's own
// checks, and need no environment variable to do so, so a fresh clone's
// "docker compose up" and "helm install" start.
func TestDeployConfigFilesLoad(t *testing.T) {
	for _, path := range []string{
		"../../../../deploy/config/askbridge.yaml",
		"../../../../deploy/helm/askbridge/files/askbridge.yaml",
	} {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parseFile(raw, func(string) string { return "" })
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		if _, ok := f.Routes["default"]; !ok {
			t.Errorf("%s has no default route", path)
		}
	}
}
