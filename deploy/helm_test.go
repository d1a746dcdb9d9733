package deploy_test

import (
	"os"
	"path"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"
)

const chartDir = "helm/askbridge"

func readValues(t *testing.T, file string) map[string]any {
	t.Helper()
	if file == "" {
		return map[string]any{}
	}
	v, err := chartutil.ReadValuesFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func lintChart(t *testing.T, values map[string]any) {
	t.Helper()
	l := lint.All(chartDir, values, "bridge", false)
	for _, msg := range l.Messages {
		if msg.Severity >= support.WarningSev {
			t.Errorf("helm lint: %s", msg)
		}
	}
}

func TestChartDefaults(t *testing.T) {
	values := readValues(t, "")
	lintChart(t, values)
	m, err := render(t, values)
	if err != nil {
		t.Fatal(err)
	}
	for what, missing := range map[string]bool{
		"Deployment": m.deployment == nil, "Service": m.service == nil, "ConfigMap": m.configMap == nil,
		"Secret": m.secret == nil, "PodDisruptionBudget": m.pdb == nil,
	} {
		if missing {
			t.Fatalf("no %s rendered", what)
		}
	}
	if m.ingress != nil {
		t.Error("an Ingress is rendered though ingress.enabled is false")
	}
	d := m.deployment
	checkPod(t, m)
	checkConfigChange(t, m, "reload")
	if *d.Spec.Replicas != 1 {
		t.Errorf("replicas %d", *d.Spec.Replicas)
	}
	c := d.Spec.Template.Spec.Containers[0]
	checkEnv(t, c, "REDIS_URL", "redis://redis:6379/0")
	if c.EnvFrom[0].SecretRef.Name != m.secret.Name {
		t.Errorf("the pods read Secret %q; the chart made %q", c.EnvFrom[0].SecretRef.Name, m.secret.Name)
	}
	if key := m.secret.StringData["ASKBRIDGE_ACTOR_KEY"]; len(key) != 64 {
		t.Errorf("the chart's Secret has an actor key of %d characters; want 64", len(key))
	}
	if key := m.secret.StringData["ASKBRIDGE_AUDIT_KEY"]; len(key) != 64 || key == m.secret.StringData["ASKBRIDGE_ACTOR_KEY"] {
		t.Errorf("the chart's Secret has an audit key of %d characters (or the actor key's); want 64 of its own", len(key))
	}
	file, err := os.ReadFile(chartDir + "/files/askbridge.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := m.configMap.Data["askbridge.yaml"]; strings.TrimSpace(got) != strings.TrimSpace(string(file)) {
		t.Errorf("the ConfigMap holds\n%s\nnot files/askbridge.yaml", got)
	}
	// The image is FROM scratch: askbridge is the one program a kubectl
	// exec can run in it (TestImage checks each against the image itself).
	execs, phrase := notesCommands(m.notes)
	for _, argv := range execs {
		if path.Base(argv[0]) != "askbridge" {
			t.Errorf("NOTES run %q in the pod, which the image does not have:\n%s", argv[0], m.notes)
		}
	}
	if phrase == "" || !strings.Contains(m.notes, "/data/admin.token") {
		t.Errorf("NOTES do not say how to find the admin token, with no tokens configured:\n%s", m.notes)
	}
}

// notesCommands reads the commands NOTES give: what each "kubectl exec ...
// --" runs in the pod, and the text a "kubectl logs ... | grep -F -A1"
// looks for in a pod's log.
func notesCommands(notes string) (execs [][]string, grepFor string) {
	for _, line := range strings.Split(notes, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "kubectl ") {
			continue
		}
		words := strings.Fields(line)
		if slices.Contains(words, "exec") {
			if _, argv, ok := strings.Cut(line, " -- "); ok {
				execs = append(execs, strings.Fields(argv))
			}
		}
		if _, grep, ok := strings.Cut(line, "| grep -F -A1 "); ok && slices.Contains(words, "logs") {
			grepFor = strings.Trim(grep, "'")
		}
	}
	return execs, grepFor
}

func TestChartReplicas(t *testing.T) {
	values := readValues(t, chartDir+"/ci/replicas-values.yaml")
	lintChart(t, values)
	m, err := render(t, values)
	if err != nil {
		t.Fatal(err)
	}
	if m.secret != nil {
		t.Error("a Secret is rendered though secret.existingSecret names one")
	}
	if m.ingress == nil {
		t.Fatal("no Ingress rendered")
	}
	checkPod(t, m)
	checkConfigChange(t, m, "restart")
	d := m.deployment
	if *d.Spec.Replicas != 3 {
		t.Errorf("replicas %d", *d.Spec.Replicas)
	}
	c := d.Spec.Template.Spec.Containers[0]
	if c.Image != "registry.example.com/askbridge:v1.2.3" {
		t.Errorf("image %q", c.Image)
	}
	if c.EnvFrom[0].SecretRef.Name != "askbridge-secrets" {
		t.Errorf("the pods read Secret %q", c.EnvFrom[0].SecretRef.Name)
	}
	// Kubernetes expands $(REDIS_PASSWORD) from the variable defined before it.
	pw := slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "REDIS_PASSWORD" })
	url := slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "REDIS_URL" })
	if pw < 0 || url < pw || c.Env[pw].ValueFrom.SecretKeyRef.Name != "askbridge-secrets" || c.Env[pw].ValueFrom.SecretKeyRef.Key != "REDIS_PASSWORD" {
		t.Errorf("REDIS_PASSWORD does not come from the Secret before REDIS_URL: %+v", c.Env)
	}
	checkEnv(t, c, "REDIS_URL", "redis://:$(REDIS_PASSWORD)@redis-master.redis.svc.cluster.local:6379/0")
	checkEnv(t, c, "ASKBRIDGE_LOG_LEVEL", "debug")

	var cfg struct {
		Tokens []struct {
			Name     string
			TokenEnv string `json:"token_env"`
		}
	}
	if err := yaml.Unmarshal([]byte(m.configMap.Data["askbridge.yaml"]), &cfg); err != nil || len(cfg.Tokens) != 2 || cfg.Tokens[0].TokenEnv != "BUILD_AGENT_TOKEN" {
		t.Errorf("the ConfigMap's tokens: %+v (%v)", cfg.Tokens, err)
	}

	ing := m.ingress
	if *ing.Spec.IngressClassName != "nginx" || ing.Spec.TLS[0].SecretName != "askbridge-tls" || ing.Spec.TLS[0].Hosts[0] != "askbridge.example.com" {
		t.Errorf("ingress spec %+v", ing.Spec)
	}
	var paths []string
	for _, p := range ing.Spec.Rules[0].HTTP.Paths {
		paths = append(paths, p.Path+" "+string(*p.PathType))
		if p.Backend.Service.Name != m.service.Name || p.Backend.Service.Port.Number != m.service.Spec.Ports[0].Port {
			t.Errorf("path %s goes to %+v, not the Service", p.Path, p.Backend.Service)
		}
	}
	// Every endpoint a platform or a person's browser calls: the one-way
	// doors' links carry a token after their path, which only a Prefix
	// path matches. Before, Teams was left out and every path was Exact.
	if want := []string{"/slack/events Exact", "/slack/interactivity Exact", "/discord/interactions Exact", "/telegram/webhook Exact",
		"/teams/messages Exact", "/email/act/ Prefix", "/ntfy/act/ Prefix"}; !slices.Equal(paths, want) {
		t.Errorf("ingress paths %v; want %v (the console is off)", paths, want)
	}
	for _, link := range []string{"/email/act/tok3n", "/ntfy/act/tok3n", "/teams/messages"} {
		if !ingressRoutes(ing, link) {
			t.Errorf("the Ingress does not route %s", link)
		}
	}
	if !strings.Contains(m.notes, "Mcp-Session-Id") {
		t.Errorf("NOTES do not say how to route /mcp to several replicas:\n%s", m.notes)
	}
}

// checkPod checks what every render must have: probes on /healthz and
// /readyz, a non-root pod with a read-only root filesystem, the config
// file mounted where ASKBRIDGE_CONFIG points, and selectors (Deployment,
// Service, PodDisruptionBudget) that pick the pods.
func checkPod(t *testing.T, m *manifests) {
	t.Helper()
	d := m.deployment
	pod := d.Spec.Template
	if len(pod.Spec.Containers) != 1 {
		t.Fatalf("%d containers", len(pod.Spec.Containers))
	}
	c := pod.Spec.Containers[0]
	if c.LivenessProbe == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" || c.LivenessProbe.HTTPGet.Port.String() != "http" {
		t.Errorf("liveness probe %+v", c.LivenessProbe)
	}
	if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" || c.ReadinessProbe.HTTPGet.Port.String() != "http" {
		t.Errorf("readiness probe %+v", c.ReadinessProbe)
	}
	if len(c.Ports) == 0 || c.Ports[0].Name != "http" || c.Ports[0].ContainerPort != 8080 {
		t.Errorf("ports %+v", c.Ports)
	}
	checkEnv(t, c, "ASKBRIDGE_ADDR", "0.0.0.0:8080")
	if i := slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "ASKBRIDGE_REPLICA_ID" }); i < 0 ||
		c.Env[i].ValueFrom == nil || c.Env[i].ValueFrom.FieldRef.FieldPath != "metadata.name" {
		t.Error("ASKBRIDGE_REPLICA_ID is not the pod's name")
	}
	ps, cs := pod.Spec.SecurityContext, c.SecurityContext
	if ps == nil || ps.RunAsNonRoot == nil || !*ps.RunAsNonRoot || ps.RunAsUser == nil || *ps.RunAsUser == 0 {
		t.Errorf("pod security context %+v does not run as non-root", ps)
	}
	if cs == nil || cs.ReadOnlyRootFilesystem == nil || !*cs.ReadOnlyRootFilesystem || cs.AllowPrivilegeEscalation == nil || *cs.AllowPrivilegeEscalation {
		t.Errorf("container security context %+v", cs)
	}
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() {
		t.Errorf("no resource requests: %+v", c.Resources)
	}
	mounts := map[string]string{}
	for _, vm := range c.VolumeMounts {
		mounts[vm.MountPath] = vm.Name
	}
	volumes := map[string]corev1.Volume{}
	for _, v := range pod.Spec.Volumes {
		volumes[v.Name] = v
	}
	if v, ok := volumes[mounts["/data"]]; !ok || v.EmptyDir == nil {
		t.Errorf("/data is not a writable emptyDir: %+v", mounts)
	}
	var cfgPath string
	for _, e := range c.Env {
		if e.Name == "ASKBRIDGE_CONFIG" {
			cfgPath = e.Value
		}
	}
	if v, ok := volumes[mounts[path.Dir(cfgPath)]]; !ok || v.ConfigMap == nil || v.ConfigMap.Name != m.configMap.Name {
		t.Errorf("ASKBRIDGE_CONFIG %q is not in the chart's ConfigMap: mounts %v", cfgPath, mounts)
	} else if _, ok := m.configMap.Data[path.Base(cfgPath)]; !ok {
		t.Errorf("the ConfigMap has no key %s", path.Base(cfgPath))
	}
	// Metrics on their own port, announced to Prometheus.
	if pod.Annotations["prometheus.io/scrape"] != "true" || pod.Annotations["prometheus.io/port"] != "9090" || pod.Annotations["prometheus.io/path"] != "/metrics" {
		t.Errorf("scrape annotations %v", pod.Annotations)
	}
	checkEnv(t, c, "ASKBRIDGE_METRICS_ADDR", "0.0.0.0:9090")
	if !slices.ContainsFunc(c.Ports, func(p corev1.ContainerPort) bool { return p.Name == "metrics" && p.ContainerPort == 9090 }) {
		t.Errorf("no metrics port: %+v", c.Ports)
	}

	podLabels := labels.Set(pod.Labels)
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil || !sel.Matches(podLabels) {
		t.Errorf("the Deployment's selector %v does not pick its pods %v", d.Spec.Selector, pod.Labels)
	}
	if !labels.SelectorFromSet(m.service.Spec.Selector).Matches(podLabels) {
		t.Errorf("the Service's selector %v does not pick the pods", m.service.Spec.Selector)
	}
	if m.service.Spec.Ports[0].TargetPort.String() != "http" {
		t.Errorf("the Service targets %v", m.service.Spec.Ports[0].TargetPort)
	}
	if m.pdb != nil {
		sel, err := metav1.LabelSelectorAsSelector(m.pdb.Spec.Selector)
		if err != nil || !sel.Matches(podLabels) {
			t.Errorf("the PodDisruptionBudget's selector does not pick the pods")
		}
	}
}

func checkEnv(t *testing.T, c corev1.Container, name, want string) {
	t.Helper()
	for _, e := range c.Env {
		if e.Name == name {
			if e.Value != want {
				t.Errorf("%s=%q; want %q", name, e.Value, want)
			}
			return
		}
	}
	t.Errorf("%s is not set; want %q", name, want)
}

// The chart reaches a Sentinel-managed primary through its Sentinels, or
// a cluster through its nodes, in go-redis's URL forms, with the
// passwords from the Secret and durable acknowledgements when asked.
func TestChartSentinelAndCluster(t *testing.T) {
	for _, c := range []struct {
		name, values, env, want string
	}{
		{"sentinel", `{redis: {mode: sentinel, masterName: askbridge, passwordKey: REDIS_PASSWORD, sentinelPasswordKey: SENTINEL_PASSWORD,
			addresses: [s0.redis:26379, s1.redis:26379, s2.redis:26379], durability: {replicas: 1, timeout: 500ms}}}`,
			"REDIS_SENTINEL_URL", "redis://:$(REDIS_SENTINEL_PASSWORD)@s0.redis:26379/0?master_name=askbridge&addr=s1.redis:26379&addr=s2.redis:26379&password=$(REDIS_PASSWORD)"},
		{"sentinel without passwords", `{redis: {mode: sentinel, masterName: m, addresses: [s0:26379]}}`,
			"REDIS_SENTINEL_URL", "redis://s0:26379/0?master_name=m"},
		{"cluster", `{redis: {mode: cluster, tls: true, passwordKey: REDIS_PASSWORD, addresses: [n0:6379, n1:6379, n2:6379]}}`,
			"REDIS_CLUSTER_URL", "rediss://:$(REDIS_PASSWORD)@n0:6379?addr=n1:6379&addr=n2:6379"},
	} {
		t.Run(c.name, func(t *testing.T) {
			vals, err := chartutil.ReadValues([]byte(c.values))
			if err != nil {
				t.Fatal(err)
			}
			lintChart(t, vals)
			m, err := render(t, vals)
			if err != nil {
				t.Fatal(err)
			}
			ct := m.deployment.Spec.Template.Spec.Containers[0]
			checkEnv(t, ct, c.env, c.want)
			for _, e := range ct.Env {
				if e.Name == "REDIS_URL" {
					t.Errorf("REDIS_URL is set beside %s", c.env)
				}
			}
			if c.name == "sentinel" {
				checkEnv(t, ct, "ASKBRIDGE_REDIS_DURABILITY", "1")
				checkEnv(t, ct, "ASKBRIDGE_REDIS_DURABILITY_TIMEOUT", "500ms")
				names := map[string]int{}
				for i, e := range ct.Env {
					names[e.Name] = i
				}
				if names["REDIS_SENTINEL_PASSWORD"] > names["REDIS_SENTINEL_URL"] || names["REDIS_PASSWORD"] > names["REDIS_SENTINEL_URL"] {
					t.Errorf("the passwords are not defined before the URL that names them: %+v", ct.Env)
				}
			}
		})
	}
}

// Values that cannot work stop the render with an error that says why.
func TestChartRefusesBadValues(t *testing.T) {
	for _, c := range []struct {
		name   string
		values string
		want   string
	}{
		{"replicas without tokens", "replicaCount: 2", "config.tokens"},
		{"no redis", `redis: {address: ""}`, "redis.address is required"},
		{"sentinel without its name", `redis: {mode: sentinel, addresses: [s0:26379]}`, "redis.masterName is required"},
		{"sentinel without Sentinels", `redis: {mode: sentinel, masterName: m}`, "redis.addresses must list the Sentinels"},
		{"cluster without nodes", `redis: {mode: cluster}`, "redis.addresses must list cluster nodes"},
		{"an unknown mode", `redis: {mode: ring}`, "mode"},
		{"a value the chart does not have", "discord: {gateway: off}", "discord"},
		{"actor key in values", "secret: {values: {ASKBRIDGE_ACTOR_KEY: x}}", "secret.actorKey"},
		{"audit key in values", "secret: {values: {ASKBRIDGE_AUDIT_KEY: x}}", "secret.auditKey"},
		// values.schema.json: a misspelt or mistyped value is named.
		{"misspelt value", "replicas: 3", "replicas"},
		{"mistyped value", "replicaCount: three", "replicaCount"},
		{"an unknown config change", "configChange: roll", "configChange"},
	} {
		t.Run(c.name, func(t *testing.T) {
			vals, err := chartutil.ReadValues([]byte(c.values))
			if err != nil {
				t.Fatal(err)
			}
			_, err = render(t, vals)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("render error %v; want one saying %q", err, c.want)
			}
		})
	}
}

// checkConfigChange checks what a changed configuration file does to the
// pods: with reload (the default) nothing in the pod template changes, so
// the pods stay and read the file again themselves; with restart the
// template carries the file's digest, so a new file rolls them.
func checkConfigChange(t *testing.T, m *manifests, want string) {
	t.Helper()
	_, rolls := m.deployment.Spec.Template.Annotations["checksum/config"]
	if rolls != (want == "restart") {
		t.Errorf("configChange %s: the pod template has the config's checksum: %v", want, rolls)
	}
}

// ingressRoutes reports whether one of ing's paths matches a request for
// path, as Kubernetes matches them: Exact whole, Prefix element by
// element of the /-split path.
func ingressRoutes(ing *networkingv1.Ingress, path string) bool {
	for _, p := range ing.Spec.Rules[0].HTTP.Paths {
		switch *p.PathType {
		case networkingv1.PathTypeExact:
			if p.Path == path {
				return true
			}
		case networkingv1.PathTypePrefix:
			want, got := strings.Split(strings.Trim(p.Path, "/"), "/"), strings.Split(strings.Trim(path, "/"), "/")
			if len(got) >= len(want) && slices.Equal(got[:len(want)], want) {
				return true
			}
		}
	}
	return false
}
