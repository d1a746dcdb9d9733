package deploy_test

import (
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/internal/gcfloor"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// TestChartKeysComeFromTheSecret: the actor and audit keys must be the
// same on every pod and across restarts, and /data is an emptyDir, so a
// pod that finds no key in its environment makes one there, a new one at
// every start. Before, the keys reached the pods only through envFrom,
// which passes over a key the Secret lacks: an existingSecret without them
// started every pod with keys of its own, silently, and the event log's
// chain and pseudonyms changed from pod to pod. Named through
// secretKeyRef (not optional), a missing key keeps the pod from starting.
func TestChartKeysComeFromTheSecret(t *testing.T) {
	for _, c := range []struct{ name, values, secret string }{
		{"the chart's Secret", "{}", "ab-askbridge"},
		{"an existing Secret", "secret: {existingSecret: mine}", "mine"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := render(t, values(t, c.values))
			if err != nil {
				t.Fatal(err)
			}
			if m.secret != nil && m.secret.Name != c.secret {
				t.Fatalf("the chart made Secret %q; the test expects %q", m.secret.Name, c.secret)
			}
			env := map[string]corev1.EnvVar{}
			for _, e := range m.deployment.Spec.Template.Spec.Containers[0].Env {
				env[e.Name] = e
			}
			for _, key := range []string{"ASKBRIDGE_ACTOR_KEY", "ASKBRIDGE_AUDIT_KEY"} {
				e, ok := env[key]
				if !ok || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
					t.Errorf("%s does not come from a secretKeyRef: %+v", key, e)
					continue
				}
				ref := e.ValueFrom.SecretKeyRef
				if ref.Name != c.secret || ref.Key != key || (ref.Optional != nil && *ref.Optional) {
					t.Errorf("%s comes from key %q of Secret %q (optional %v); want the required key %s of %s",
						key, ref.Key, ref.Name, ref.Optional, key, c.secret)
				}
			}
		})
	}
}

// readyzBound is how long /readyz waits for the store's ping before it
// answers 503 with the store's reason (adapters/httpapi, readyzTimeout);
// askbridge healthcheck, the image's and the compose file's health check,
// waits 3 s for it (README, "Deploy").
const (
	readyzBound        = 2 * time.Second
	healthcheckTimeout = 3 * time.Second
)

// TestChartProbesWaitForTheirAnswer: a probe that gives up before
// /readyz has answered counts a slow store as a failure with no reason
// given. Before, the probes had the kubelet's default timeout of 1 s, so
// a Redis answering pings in a second or two took every pod (they share
// it) out of the Service at once.
func TestChartProbesWaitForTheirAnswer(t *testing.T) {
	m, err := render(t, map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	c := m.deployment.Spec.Template.Spec.Containers[0]
	for name, p := range map[string]*corev1.Probe{"readiness": c.ReadinessProbe, "liveness": c.LivenessProbe} {
		if p == nil {
			t.Errorf("no %s probe", name)
			continue
		}
		// Kubernetes reads 0 as its default, 1 s.
		timeout := time.Duration(max(p.TimeoutSeconds, 1)) * time.Second
		if timeout <= readyzBound || timeout < healthcheckTimeout {
			t.Errorf("%s probe: timeout %s; want %s, as askbridge healthcheck waits, past /readyz's own %s",
				name, timeout, healthcheckTimeout, readyzBound)
		}
	}
}

// TestChartRequestsTheMemoryServeUses: serve lets its heap grow to
// gcfloor.ServerFloor before it collects, with a soft memory limit of
// twice that while little is live, so that is what a pod comes to use
// when busy. Before, the chart requested 64Mi, the floor alone: a busy pod
// used more than it asked for, and was among the first evicted when its
// node ran short.
func TestChartRequestsTheMemoryServeUses(t *testing.T) {
	m, err := render(t, map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	res := m.deployment.Spec.Template.Spec.Containers[0].Resources
	soft := resource.NewQuantity(2*gcfloor.ServerFloor, resource.BinarySI)
	if req := res.Requests.Memory(); req.Cmp(*soft) < 0 {
		t.Errorf("memory request %s; want at least %s, the soft limit serve keeps while little is live", req, soft)
	}
	if limit := res.Limits.Memory(); limit.IsZero() || limit.Cmp(*res.Requests.Memory()) <= 0 {
		t.Errorf("memory limit %s; want one above the request %s, for a larger live heap", limit, res.Requests.Memory())
	}
}

// TestChartPinsTheImageByDigest: image.digest names the image by its
// digest, in place of the tag, so a tag pushed again cannot change what
// runs; a value that is no sha256 digest is refused by name. Before, the
// chart took a tag only.
func TestChartPinsTheImageByDigest(t *testing.T) {
	digest := "sha256:" + strings.Repeat("0a", 32)
	m, err := render(t, values(t, "image: {repository: reg.example/askbridge, tag: v1, digest: '"+digest+"'}"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := m.deployment.Spec.Template.Spec.Containers[0].Image, "reg.example/askbridge@"+digest; got != want {
		t.Errorf("image %q; want %q", got, want)
	}
	m, err = render(t, values(t, "image: {repository: reg.example/askbridge, tag: v1}"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := m.deployment.Spec.Template.Spec.Containers[0].Image, "reg.example/askbridge:v1"; got != want {
		t.Errorf("image without a digest %q; want %q", got, want)
	}
	for _, bad := range []string{"latest", "sha256:abc", "@sha256:" + strings.Repeat("0a", 32)} {
		if _, err := render(t, values(t, "image: {digest: '"+bad+"'}")); err == nil || !strings.Contains(err.Error(), "digest") {
			t.Errorf("digest %q: render error %v; want one naming image.digest", bad, err)
		}
	}
}

// TestChartPassesSecretValuesAsWritten: a Secret's value is a string,
// byte for byte, and YAML reads an unquoted number its own way: Helm
// holds a values file's numbers as floats, so toString wrote 123456789 as
// "1.23456789e+08", a Discord application id (18 digits) rounded, and
// 0123 as "83" (an octal number). Before, the schema took numbers and
// booleans and the chart wrote them so, and a password or id that
// happened to be all digits reached the pods corrupted, with no error.
// Now anything but a string is refused by name, to be quoted.
func TestChartPassesSecretValuesAsWritten(t *testing.T) {
	for _, raw := range []string{"123456789", "123456789012345678", "0123", "true", "1e3"} {
		_, err := render(t, values(t, "secret: {values: {EMAIL_SMTP_PASSWORD: "+raw+"}}"))
		if err == nil || !strings.Contains(err.Error(), "EMAIL_SMTP_PASSWORD") {
			t.Errorf("secret.values.EMAIL_SMTP_PASSWORD: %s, unquoted: render error %v; want one naming it", raw, err)
		}
	}
	m, err := render(t, values(t, `secret: {values: {EMAIL_SMTP_PASSWORD: "0123", DISCORD_APP_ID: "123456789012345678"}}`))
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"EMAIL_SMTP_PASSWORD": "0123", "DISCORD_APP_ID": "123456789012345678"} {
		if got := m.secret.StringData[k]; got != want {
			t.Errorf("the Secret's %s is %q; want %q, as written", k, got, want)
		}
	}
}
