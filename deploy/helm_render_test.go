package deploy_test

import (
	"fmt"
	"path"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// manifests is one render of the chart, each object decoded into its
// Kubernetes API type.
type manifests struct {
	deployment *appsv1.Deployment
	service    *corev1.Service
	configMap  *corev1.ConfigMap
	secret     *corev1.Secret
	pdb        *policyv1.PodDisruptionBudget
	ingress    *networkingv1.Ingress
	netpol     *networkingv1.NetworkPolicy
	notes      string
}

// render is "helm template" through Helm's own chart loader and engine,
// as release ab in namespace bridge.
func render(t *testing.T, values map[string]any) (*manifests, error) {
	t.Helper()
	return renderRelease(t, chartutil.ReleaseOptions{Name: "ab", Namespace: "bridge"}, values)
}

// renderRelease is render as the release rel names, installed.
func renderRelease(t *testing.T, rel chartutil.ReleaseOptions, values map[string]any) (*manifests, error) {
	t.Helper()
	return renderWith(t, rel, chartutil.DefaultCapabilities, values)
}

// renderOn is render for a cluster of Kubernetes version kube ("v1.30.0"),
// as helm install sees it: the chart leaves out what older ones refuse.
func renderOn(t *testing.T, kube string, values map[string]any) (*manifests, error) {
	t.Helper()
	v, err := chartutil.ParseKubeVersion(kube)
	if err != nil {
		t.Fatal(err)
	}
	caps := *chartutil.DefaultCapabilities
	caps.KubeVersion = *v
	return renderWith(t, chartutil.ReleaseOptions{Name: "ab", Namespace: "bridge"}, &caps, values)
}

// renderWith is renderRelease on a cluster with caps.
func renderWith(t *testing.T, rel chartutil.ReleaseOptions, caps *chartutil.Capabilities, values map[string]any) (*manifests, error) {
	t.Helper()
	ch, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	rel.IsInstall, rel.Revision = true, 1
	vals, err := chartutil.ToRenderValues(ch, values, rel, caps)
	if err != nil {
		return nil, err
	}
	files, err := engine.Render(ch, vals)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	m := &manifests{}
	for _, name := range names {
		base := path.Base(name)
		switch {
		case base == "NOTES.txt":
			m.notes = files[name]
			continue
		case strings.HasPrefix(base, "_"):
			continue
		}
		for i, doc := range strings.Split(files[name], "\n---") {
			if strings.TrimSpace(doc) == "" {
				continue
			}
			decode(t, fmt.Sprintf("%s#%d", name, i), doc, m)
		}
	}
	return m, nil
}

// decode puts one rendered object into its typed field, strictly: a field
// the API type does not have (a misspelt or misplaced key) fails, as it
// would be dropped or refused by the API server.
func decode(t *testing.T, where, doc string, m *manifests) {
	t.Helper()
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	var into any
	switch tm.APIVersion + " " + tm.Kind {
	case "apps/v1 Deployment":
		m.deployment = &appsv1.Deployment{}
		into = m.deployment
	case "v1 Service":
		m.service = &corev1.Service{}
		into = m.service
	case "v1 ConfigMap":
		m.configMap = &corev1.ConfigMap{}
		into = m.configMap
	case "v1 Secret":
		m.secret = &corev1.Secret{}
		into = m.secret
	case "policy/v1 PodDisruptionBudget":
		m.pdb = &policyv1.PodDisruptionBudget{}
		into = m.pdb
	case "networking.k8s.io/v1 Ingress":
		m.ingress = &networkingv1.Ingress{}
		into = m.ingress
	case "networking.k8s.io/v1 NetworkPolicy":
		m.netpol = &networkingv1.NetworkPolicy{}
		into = m.netpol
	default:
		t.Fatalf("%s: unexpected object %s %s", where, tm.APIVersion, tm.Kind)
	}
	if err := yaml.UnmarshalStrict([]byte(doc), into); err != nil {
		t.Fatalf("%s does not decode strictly into %s: %v\n%s", where, tm.Kind, err, doc)
	}
}
