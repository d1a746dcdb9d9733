package deploy_test

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// imageRef is a base image named in full: a registry host, a path, a
// tag, and optionally the digest the registry gave that tag
// ("name:tag@sha256:..."), which then decides what is pulled while the
// tag says which it was. A short name ("redis:7") is refused: podman and
// buildah refuse it too, and which registry it means is each machine's
// choice.
var imageRef = regexp.MustCompile(`^[a-z0-9-]+(\.[a-z0-9-]+)+(:[0-9]+)?/[a-z0-9._/-]+:[A-Za-z0-9._-]+(@sha256:[0-9a-f]{64})?$`)

// baseImages are the images deploy/ pulls from elsewhere: the Dockerfile's
// default build image and each compose service's image.
func baseImages(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	raw, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "ARG GO_IMAGE="); ok {
			out["Dockerfile GO_IMAGE"] = strings.TrimSpace(v)
		}
		if f := strings.Fields(line); len(f) > 1 && f[0] == "FROM" && f[1] != "scratch" && !strings.HasPrefix(f[1], "${") {
			out["Dockerfile FROM"] = f[1]
		}
	}
	p := loadComposeFiles(t, []string{"compose.yaml", "compose.sentinel.yaml"})
	for name, s := range p.Services {
		if s.Image != "" && s.Build == nil {
			out["compose "+name] = s.Image
		}
	}
	return out
}

// TestBaseImagesNamedInFull: every base image is named with its registry
// and a tag, and a digest, where one is given, in its one form.
func TestBaseImagesNamedInFull(t *testing.T) {
	images := baseImages(t)
	if _, ok := images["Dockerfile GO_IMAGE"]; !ok || len(images) < 2 {
		t.Fatalf("found only %v", images)
	}
	for where, ref := range images {
		if !imageRef.MatchString(ref) {
			t.Errorf("%s: %q is not registry/name:tag, or name:tag@sha256:<64 hex digits>", where, ref)
		}
	}
}
