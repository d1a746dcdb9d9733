package deploy_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
)

// TestChartKeepsTheMetricsPortInsideTheCluster: the metrics port serves
// /metrics with no token, and each scrape counts the store's open
// questions, so it is for a scraper inside the cluster only. Before, the
// Service carried it whatever its type: service.type LoadBalancer (or
// NodePort) put it on the load balancer's address (or every node's), for
// anyone to read and to make the store count on demand. A ClusterIP
// Service keeps it, for a ServiceMonitor; the pods keep it and their
// scrape annotations whatever the type.
func TestChartKeepsTheMetricsPortInsideTheCluster(t *testing.T) {
	for _, typ := range []string{"ClusterIP", "NodePort", "LoadBalancer"} {
		t.Run(typ, func(t *testing.T) {
			m, err := render(t, values(t, "service: {type: "+typ+"}"))
			if err != nil {
				t.Fatal(err)
			}
			if got := string(m.service.Spec.Type); got != typ {
				t.Fatalf("the Service is of type %s; the test asked for %s", got, typ)
			}
			metrics := len(metricsPorts(m.service)) > 0
			if api := m.service.Spec.Ports; len(api) == 0 || api[0].TargetPort.String() != "http" {
				t.Errorf("the Service has no port to the API: %+v", m.service.Spec.Ports)
			}
			if want := typ == "ClusterIP"; metrics != want {
				t.Errorf("a %s Service carries the token-less metrics port: %v; want %v (ports %+v)", typ, metrics, want, m.service.Spec.Ports)
			}
			pod := m.deployment.Spec.Template
			hasPort := false
			for _, p := range pod.Spec.Containers[0].Ports {
				hasPort = hasPort || (p.Name == "metrics" && p.ContainerPort == 9090)
			}
			if !hasPort || pod.Annotations["prometheus.io/port"] != "9090" {
				t.Errorf("with a %s Service the pods lost their metrics port (%v) or scrape annotations %v", typ, hasPort, pod.Annotations)
			}
		})
	}
}

// TestChartRefusesAMetricsPortTakenByTheAPI: the metrics listener opens
// before the API's, so a metrics.port of 8080 (the container's API port)
// left serve unable to listen, every pod restarting in a loop; and a
// metrics.port equal to service.port made a Service with one port twice,
// which the API server refuses. Before, both rendered.
// (TestChartKeepsTheMetricsPortInsideTheCluster keeps the port off a
// Service of any other type.)
func TestChartRefusesAMetricsPortTakenByTheAPI(t *testing.T) {
	for _, raw := range []string{
		"metrics: {port: 8080}",
		"service: {port: 9090}",
		"metrics: {port: 8443}\nservice: {port: 8443}",
	} {
		_, err := render(t, values(t, raw))
		if err == nil || !strings.Contains(err.Error(), "metrics.port") {
			t.Errorf("%q: render error %v; want one naming metrics.port", raw, err)
		}
	}
	// A LoadBalancer Service does not carry the metrics port, so it may
	// use the same number for the API.
	if _, err := render(t, values(t, "service: {type: LoadBalancer, port: 9090}")); err != nil {
		t.Errorf("a LoadBalancer Service on 9090, metrics on the pods' 9090: %v", err)
	}
	// Metrics off: there is no listener to collide with.
	m, err := render(t, values(t, "metrics: {enabled: false, port: 8080}"))
	if err != nil {
		t.Fatalf("metrics off, port 8080: %v", err)
	}
	if ports := metricsPorts(m.service); len(ports) > 0 {
		t.Errorf("metrics off, yet the Service has %+v", ports)
	}
	for _, e := range m.deployment.Spec.Template.Spec.Containers[0].Env {
		if e.Name == "ASKBRIDGE_METRICS_ADDR" {
			t.Errorf("metrics off, yet %s=%s", e.Name, e.Value)
		}
	}
}

// TestChartLetsADrainEvictPodsThatAreNotReady: when the store is down,
// /readyz fails on every pod at once (they share it), none is healthy,
// and a PodDisruptionBudget's default policy (IfHealthyBudget) then
// refuses to evict even the pods that are not ready: a node drain, often
// the very remedy in an outage, waited for the store to come back.
// Evicting a pod that is not ready takes nothing from what serves, and
// its state is in Redis, so the chart asks for AlwaysAllow, on the
// clusters that have the field (Kubernetes 1.27 and later).
func TestChartLetsADrainEvictPodsThatAreNotReady(t *testing.T) {
	const three = "replicaCount: 3\nconfig: {tokens: [{name: ops, role: operator, token_env: OPS_TOKEN}]}"
	for _, kube := range []string{"v1.27.0", "v1.31.2"} {
		m, err := renderOn(t, kube, values(t, three))
		if err != nil {
			t.Fatal(err)
		}
		if m.pdb == nil {
			t.Fatalf("%s: no PodDisruptionBudget", kube)
		}
		if p := m.pdb.Spec.UnhealthyPodEvictionPolicy; p == nil || *p != policyv1.AlwaysAllow {
			t.Errorf("%s: unhealthyPodEvictionPolicy %v; want %s, so a drain is not held up by pods that serve nothing", kube, p, policyv1.AlwaysAllow)
		}
	}
	old, err := renderOn(t, "v1.26.5", values(t, three))
	if err != nil {
		t.Fatal(err)
	}
	if p := old.pdb.Spec.UnhealthyPodEvictionPolicy; p != nil {
		t.Errorf("on Kubernetes 1.26 the PodDisruptionBudget sets unhealthyPodEvictionPolicy %s, which that API server does not serve", *p)
	}
}

// metricsPorts is the Service's ports that reach the pods' metrics port,
// by its name or its number.
func metricsPorts(s *corev1.Service) []corev1.ServicePort {
	var out []corev1.ServicePort
	for _, p := range s.Spec.Ports {
		if p.TargetPort.String() == "metrics" || p.TargetPort.IntValue() == 9090 {
			out = append(out, p)
		}
	}
	return out
}
