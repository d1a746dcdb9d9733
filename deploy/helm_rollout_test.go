package deploy_test

import (
	"os"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chartutil"
)

// values reads a YAML literal of chart values.
func values(t *testing.T, raw string) map[string]any {
	t.Helper()
	v, err := chartutil.ReadValues([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// secretChecksum renders the chart with raw values and returns its pod
// template's checksum/secret annotation, "" when it has none.
func secretChecksum(t *testing.T, raw string) string {
	t.Helper()
	m, err := render(t, values(t, raw))
	if err != nil {
		t.Fatal(err)
	}
	return m.deployment.Spec.Template.Annotations["checksum/secret"]
}

// TestChartSecretChangeRollsThePods: the pods read the chart's Secret
// (envFrom) only when they start, so a change to it, a new token's
// variable or a rotated token, rolls them, whatever configChange says;
// before, with configChange reload, nothing in the pod template changed,
// and the pods never saw it (a reloaded file naming the new token's
// variable was refused: "token_env: environment variable X is empty").
// Rendering twice rolls nothing: the checksum is over what the values
// give, not over keys the chart makes when it finds no Secret to keep.
func TestChartSecretChangeRollsThePods(t *testing.T) {
	const tokens = `config: {tokens: [{name: build-agent, role: agent, token_env: BUILD_AGENT_TOKEN}]}`
	before := secretChecksum(t, tokens+"\nsecret: {values: {BUILD_AGENT_TOKEN: 0123456789abcdef0123}}")
	if before == "" {
		t.Fatal("the pod template has no checksum/secret, with the chart making the Secret")
	}
	for name, raw := range map[string]string{
		"a new token's variable": tokens + "\nsecret: {values: {BUILD_AGENT_TOKEN: 0123456789abcdef0123, OPS_TOKEN: fedcba9876543210fedc}}",
		"a rotated token":        tokens + "\nsecret: {values: {BUILD_AGENT_TOKEN: 3210fedcba9876543210}}",
		"a given actor key":      tokens + "\nsecret: {values: {BUILD_AGENT_TOKEN: 0123456789abcdef0123}, actorKey: k}",
	} {
		if got := secretChecksum(t, raw); got == before || got == "" {
			t.Errorf("%s: checksum/secret %q, before %q; want a new one, which rolls the pods", name, got, before)
		}
	}
	if again := secretChecksum(t, tokens+"\nsecret: {values: {BUILD_AGENT_TOKEN: 0123456789abcdef0123}}"); again != before {
		t.Errorf("the same values rendered again give checksum/secret %q, not %q: every upgrade would roll the pods", again, before)
	}
	if got := secretChecksum(t, "configChange: restart\nsecret: {values: {A: b}}"); got == "" {
		t.Error("configChange restart: the pod template has no checksum/secret")
	}
}

// TestChartExistingSecretNeedsARestart: the chart cannot see into a
// Secret it did not make, so its pods carry no checksum of it, and the
// values and NOTES say that a change to it needs kubectl rollout restart.
func TestChartExistingSecretNeedsARestart(t *testing.T) {
	m, err := render(t, values(t, "secret: {existingSecret: mine}"))
	if err != nil {
		t.Fatal(err)
	}
	if sum, ok := m.deployment.Spec.Template.Annotations["checksum/secret"]; ok {
		t.Errorf("checksum/secret %q of a Secret the chart does not make", sum)
	}
	restart := "kubectl -n bridge rollout restart deploy/" + m.deployment.Name
	if !strings.Contains(m.notes, restart) {
		t.Errorf("NOTES do not say %q:\n%s", restart, m.notes)
	}
	raw, err := os.ReadFile(chartDir + "/values.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), "kubectl rollout restart") {
		t.Error("values.yaml does not say that a change to existingSecret needs kubectl rollout restart")
	}
}

// TestChartNotesNameTheRedisInUse: NOTES name the Redis the pods reach in
// each mode; before, they named redis.address, an unused default in
// sentinel and cluster modes.
func TestChartNotesNameTheRedisInUse(t *testing.T) {
	for _, c := range []struct{ values, want string }{
		{`redis: {address: r.example:6380}`, "on Redis at r.example:6380."},
		{`redis: {mode: sentinel, masterName: prime, addresses: [s0:26379, s1:26379]}`, "on the Redis primary prime of the Sentinels at s0:26379, s1:26379."},
		{`redis: {mode: cluster, addresses: [n0:6379, n1:6379]}`, "on the Redis Cluster of n0:6379, n1:6379."},
	} {
		m, err := render(t, values(t, c.values))
		if err != nil {
			t.Fatal(err)
		}
		first, _, _ := strings.Cut(m.notes, "\n")
		if !strings.HasSuffix(first, c.want) || (!strings.Contains(c.values, "address:") && strings.Contains(first, "redis:6379")) {
			t.Errorf("%s: NOTES begin %q; want it to end %q", c.values, first, c.want)
		}
	}
}

// TestReadmePortForwardsTheChartsDeployment: the README's kubectl
// port-forward names what "helm install askbridge" makes: a Deployment
// (before, pod/askbridge-0, a StatefulSet's pod name, which no install
// has).
func TestReadmePortForwardsTheChartsDeployment(t *testing.T) {
	m, err := renderRelease(t, chartutil.ReleaseOptions{Name: "askbridge", Namespace: "default"}, map[string]any{})
	if err != nil || m.deployment == nil || m.deployment.Name == "" {
		t.Fatalf("the Deployment of release askbridge: %v", err)
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, line := range strings.Split(string(readme), "\n") {
		words := strings.Fields(line)
		if len(words) < 3 || words[0] != "kubectl" || words[1] != "port-forward" {
			continue
		}
		found = true
		if want := "deploy/" + m.deployment.Name; words[2] != want {
			t.Errorf("README: %q; want it to port-forward %s, the chart's Deployment", line, want)
		}
	}
	if !found {
		t.Error("README has no kubectl port-forward line")
	}
}
