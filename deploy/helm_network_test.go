package deploy_test

import (
	"path"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
)

// TestChartNetworkPolicyLetsInOnlyThePeersNamed: with networkPolicy on,
// the pods take connections on the API port only from apiFrom and on the
// metrics port only from metricsFrom. A list left empty gets no rule at
// all (a rule without "from" would let every source in), and the metrics
// rule goes with the metrics port. Before, the chart had no policy: any
// pod in the cluster reached the console's sign-in page and the
// token-less metrics port.
func TestChartNetworkPolicyLetsInOnlyThePeersNamed(t *testing.T) {
	m, err := render(t, values(t, "{}"))
	if err != nil {
		t.Fatal(err)
	}
	if m.netpol != nil {
		t.Fatalf("the default values render a NetworkPolicy: %+v", m.netpol.Spec)
	}

	const agents = `{podSelector: {matchLabels: {askbridge-agent: "true"}}}`
	const prometheus = `{namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: monitoring}}}`
	for _, c := range []struct {
		name, values string
		want         map[int32]string // port -> the label its one peer selects by
	}{
		{"both", "networkPolicy: {enabled: true, apiFrom: [" + agents + "], metricsFrom: [" + prometheus + "]}",
			map[int32]string{8080: "askbridge-agent", 9090: "kubernetes.io/metadata.name"}},
		{"the API only", "networkPolicy: {enabled: true, apiFrom: [" + agents + "]}",
			map[int32]string{8080: "askbridge-agent"}},
		{"nobody", "networkPolicy: {enabled: true}", map[int32]string{}},
		{"metrics off", "metrics: {enabled: false}\nnetworkPolicy: {enabled: true, metricsFrom: [" + prometheus + "]}",
			map[int32]string{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := render(t, values(t, c.values))
			if err != nil {
				t.Fatal(err)
			}
			np := m.netpol
			if np == nil {
				t.Fatal("no NetworkPolicy rendered")
			}
			if !reflect.DeepEqual(np.Spec.PodSelector.MatchLabels, m.deployment.Spec.Selector.MatchLabels) {
				t.Errorf("the policy selects %v; the pods are %v", np.Spec.PodSelector.MatchLabels, m.deployment.Spec.Selector.MatchLabels)
			}
			if !reflect.DeepEqual(np.Spec.PolicyTypes, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}) {
				t.Errorf("policy types %v; want Ingress only (egress reaches Redis and the platforms)", np.Spec.PolicyTypes)
			}
			got := map[int32]string{}
			for _, r := range np.Spec.Ingress {
				if len(r.From) == 0 {
					t.Errorf("a rule lets every source in: %+v", r)
				}
				if len(r.Ports) != 1 || r.Ports[0].Port == nil {
					t.Fatalf("a rule's ports: %+v; want one port", r.Ports)
				}
				for _, p := range r.From {
					got[r.Ports[0].Port.IntVal] = peerLabel(p)
				}
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("ports let in, with the label their peer selects by: %v; want %v", got, c.want)
			}
		})
	}
}

// peerLabel is the one label key a test peer selects by.
func peerLabel(p networkingv1.NetworkPolicyPeer) string {
	switch {
	case p.PodSelector != nil:
		for k := range p.PodSelector.MatchLabels {
			return k
		}
	case p.NamespaceSelector != nil:
		for k := range p.NamespaceSelector.MatchLabels {
			return k
		}
	}
	return ""
}

// TestChartMountsAPrivateRedisCA: redis.tlsCA mounts the CA's key of a
// Secret and names the file in REDIS_TLS_CA_FILE, which serve reads for a
// rediss:// server's certificate. Before, the chart had no way to give
// the pods a private CA: every TLS connection to such a Redis failed its
// handshake. Without tls it is refused, as the CA would go unused.
func TestChartMountsAPrivateRedisCA(t *testing.T) {
	m, err := render(t, values(t, "redis: {tls: true, tlsCA: {secretName: redis-ca, key: ca.pem}}"))
	if err != nil {
		t.Fatal(err)
	}
	pod := m.deployment.Spec.Template.Spec
	c := pod.Containers[0]
	file := envValue(c, "REDIS_TLS_CA_FILE")
	if file == "" {
		t.Fatalf("REDIS_TLS_CA_FILE is not set: %+v", c.Env)
	}
	if url := envValue(c, "REDIS_URL"); !strings.HasPrefix(url, "rediss://") {
		t.Errorf("REDIS_URL %q; want rediss://", url)
	}
	var mount *corev1.VolumeMount
	for i := range c.VolumeMounts {
		if c.VolumeMounts[i].MountPath == path.Dir(file) {
			mount = &c.VolumeMounts[i]
		}
	}
	if mount == nil || !mount.ReadOnly {
		t.Fatalf("nothing mounted read-only at %s, where REDIS_TLS_CA_FILE points: %+v", path.Dir(file), c.VolumeMounts)
	}
	var vol *corev1.Volume
	for i := range pod.Volumes {
		if pod.Volumes[i].Name == mount.Name {
			vol = &pod.Volumes[i]
		}
	}
	if vol == nil || vol.Secret == nil || vol.Secret.SecretName != "redis-ca" {
		t.Fatalf("the volume %q is not the Secret redis-ca: %+v", mount.Name, vol)
	}
	want := []corev1.KeyToPath{{Key: "ca.pem", Path: path.Base(file)}}
	if !reflect.DeepEqual(vol.Secret.Items, want) {
		t.Errorf("the Secret's items %+v; want %+v (its key at the file serve reads)", vol.Secret.Items, want)
	}

	m, err = render(t, values(t, "{}"))
	if err != nil {
		t.Fatal(err)
	}
	if v := envValue(m.deployment.Spec.Template.Spec.Containers[0], "REDIS_TLS_CA_FILE"); v != "" {
		t.Errorf("the defaults set REDIS_TLS_CA_FILE=%q", v)
	}
	if _, err := render(t, values(t, "redis: {tlsCA: {secretName: redis-ca}}")); err == nil || !strings.Contains(err.Error(), "redis.tls") {
		t.Errorf("a CA without tls rendered (error %v); want a refusal naming redis.tls", err)
	}
}

// envValue is the container's value of the variable name, "" if unset.
func envValue(c corev1.Container, name string) string {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}
