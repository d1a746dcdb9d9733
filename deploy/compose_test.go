package deploy_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
)

// loadCompose loads deploy/compose.yaml with the compose specification's
// own loader, interpolating from env only (never this machine's
// environment or a developer's deploy/.env).
func loadCompose(t *testing.T, env ...string) *types.Project {
	t.Helper()
	return loadComposeFiles(t, []string{"compose.yaml"}, env...)
}

// loadComposeFiles loads files, each overriding the one before, as
// docker compose -f a -f b does.
func loadComposeFiles(t *testing.T, files []string, env ...string) *types.Project {
	t.Helper()
	opts, err := cli.NewProjectOptions(files,
		cli.WithWorkingDirectory("."), cli.WithEnv(env), cli.WithName("askbridge"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := opts.LoadProject(t.Context())
	if err != nil {
		t.Fatalf("loading %v: %v", files, err)
	}
	return p
}

func TestCompose(t *testing.T) {
	p := loadCompose(t)
	names := p.ServiceNames()
	slices.Sort(names)
	if !slices.Equal(names, []string{"askbridge", "redis"}) {
		t.Fatalf("services %v; want askbridge and redis", names)
	}
	for _, v := range []string{"askbridge-data", "redis-data"} {
		if _, ok := p.Volumes[v]; !ok {
			t.Errorf("no named volume %s: %v", v, p.Volumes)
		}
	}

	redis := p.Services["redis"]
	if got := strings.Join(redis.Command, " "); !strings.Contains(got, "--appendonly yes") || !strings.Contains(got, "--appendfsync everysec") {
		t.Errorf("redis command %q does not keep an append-only file synced every second", got)
	}
	checkVolume(t, redis, "redis-data", "/data")
	checkHealth(t, redis, `CMD-SHELL test "$(redis-cli ping)" = PONG`) // what it passes on: TestRedisHealthChecksWantTheRightReply

	ab := p.Services["askbridge"]
	if ab.Build == nil {
		t.Fatal("askbridge has no build section")
	}
	root, _ := filepath.Abs("..")
	if ab.Build.Context != root || ab.Build.Dockerfile != "deploy/Dockerfile" {
		t.Errorf("build context %q, dockerfile %q; want the repository root and deploy/Dockerfile", ab.Build.Context, ab.Build.Dockerfile)
	}
	checkVolume(t, ab, "askbridge-data", "/data")
	checkHealth(t, ab, "CMD /usr/local/bin/askbridge healthcheck --live") // why: TestHealthChecksAskLiveness
	if dep, ok := ab.DependsOn["redis"]; !ok || dep.Condition != types.ServiceConditionHealthy {
		t.Errorf("askbridge does not wait for a healthy redis: %+v", ab.DependsOn)
	}
	if v := ab.Environment["REDIS_URL"]; v == nil || *v != "redis://redis:6379/0" {
		t.Errorf("REDIS_URL %v does not name the redis service", v)
	}
	if len(ab.EnvFiles) != 1 || filepath.Base(ab.EnvFiles[0].Path) != ".env" || bool(ab.EnvFiles[0].Required) {
		t.Errorf("env_file %+v; want an optional .env, so a fresh clone starts", ab.EnvFiles)
	}
	// Where the configuration file is mounted: TestComposeMountsConfigDirectory.
	if v := ab.Environment["ASKBRIDGE_CONFIG"]; v == nil || *v != "/etc/askbridge/askbridge.yaml" {
		t.Errorf("ASKBRIDGE_CONFIG %v", v)
	}
	if !ab.ReadOnly || !slices.Contains(ab.CapDrop, "ALL") {
		t.Errorf("askbridge: read_only %v, cap_drop %v", ab.ReadOnly, ab.CapDrop)
	}
	if len(ab.Ports) != 1 || ab.Ports[0].Target != 8080 || ab.Ports[0].HostIP != "127.0.0.1" || ab.Ports[0].Published != "8080" {
		t.Errorf("ports %+v; want 127.0.0.1:8080 -> 8080 by default", ab.Ports)
	}

	// ASKBRIDGE_PUBLISH opens the port to the network when a platform has to
	// reach it.
	open := loadCompose(t, "ASKBRIDGE_PUBLISH=9000").Services["askbridge"].Ports
	if len(open) != 1 || open[0].HostIP != "" || open[0].Published != "9000" {
		t.Errorf("with ASKBRIDGE_PUBLISH=9000: ports %+v", open)
	}
}

func checkVolume(t *testing.T, s types.ServiceConfig, source, target string) {
	t.Helper()
	for _, v := range s.Volumes {
		if v.Type == types.VolumeTypeVolume && v.Source == source && v.Target == target {
			return
		}
	}
	t.Errorf("%s: no named volume %s at %s: %+v", s.Name, source, target, s.Volumes)
}

func checkHealth(t *testing.T, s types.ServiceConfig, want string) {
	t.Helper()
	if s.HealthCheck == nil || strings.Join(s.HealthCheck.Test, " ") != want || s.HealthCheck.Interval == nil {
		t.Errorf("%s: health check %+v; want %q with an interval", s.Name, s.HealthCheck, want)
	}
}

// readmeVariables are the environment variables the README documents
// (tableVariables).
func readmeVariables(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	out := tableVariables(string(raw))
	if len(out) < 10 {
		t.Fatalf("found only %v in the README's tables", out)
	}
	return out
}

// tableVariables are the backquoted names in the first column of a
// markdown text's tables whose first column is headed "variable": the
// README's other tables hold other capital words there (routes' methods,
// error codes).
func tableVariables(readme string) []string {
	name := regexp.MustCompile("`([A-Z][A-Z0-9_]+)`")
	var out []string
	inTable, variables := false, false
	for _, line := range strings.Split(readme, "\n") {
		if !strings.HasPrefix(line, "|") {
			inTable = false
			continue
		}
		first, _, _ := strings.Cut(line[1:], "|")
		if !inTable { // the header row
			inTable, variables = true, strings.TrimSpace(first) == "variable"
			continue
		}
		if !variables {
			continue
		}
		for _, m := range name.FindAllStringSubmatch(first, -1) {
			if !slices.Contains(out, m[1]) {
				out = append(out, m[1])
			}
		}
	}
	return out
}

// TestReadmeVariablesAreTheVariableTables: only the tables whose first
// column is headed "variable" list environment variables; another
// table's first column may hold a backquoted capital word that is none
// (the API's table of routes and roles has `POST`/`GET /v1/...`).
// Before, every table was read, and TestEnvExampleListsEveryVariable
// asked .env.example for a variable POST.
func TestReadmeVariablesAreTheVariableTables(t *testing.T) {
	readme := strings.Join([]string{
		"| variable | default | meaning |",
		"|---|---|---|",
		"| `ASKBRIDGE_ADDR` | `127.0.0.1:8080` | where serve listens |",
		"| `SLACK_BOT_TOKEN`, `SLACK_APP_TOKEN` | | Slack |",
		"",
		"| route | agent | operator | observer |",
		"|---|---|---|---|",
		"| `POST`/`GET /v1/questions/{id}/mcp/decline` | own | - | - |",
		"| `DELETE /v1/x` | - | yes | - |",
		"",
		"| status | code | when |",
		"|---|---|---|",
		"| `NOT_FOUND` | 404 | no such question |",
		"",
		"| variable | meaning |",
		"|---|---|",
		"| `OTEL_SERVICE_NAME` | the service's name |",
	}, "\n")
	want := []string{"ASKBRIDGE_ADDR", "SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "OTEL_SERVICE_NAME"}
	if got := tableVariables(readme); !slices.Equal(got, want) {
		t.Errorf("tableVariables read %q; want %q, the variable tables' names only", got, want)
	}
}

func TestEnvExampleListsEveryVariable(t *testing.T) {
	raw, err := os.ReadFile(".env.example")
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	line := regexp.MustCompile(`(?m)^#? ?([A-Z][A-Z0-9_]+)=`)
	for _, m := range line.FindAllStringSubmatch(string(raw), -1) {
		listed[m[1]] = true
	}
	for _, v := range readmeVariables(t) {
		if !listed[v] {
			t.Errorf(".env.example does not list %s, which the README documents", v)
		}
	}
}

// TestComposeSentinel loads compose.yaml with compose.sentinel.yaml over
// it: askbridge reaches the primary through three Sentinels that watch it
// and its replica, waits for them, and asks for durable answers.
func TestComposeSentinel(t *testing.T) {
	p := loadComposeFiles(t, []string{"compose.yaml", "compose.sentinel.yaml"})
	names := p.ServiceNames()
	slices.Sort(names)
	if want := []string{"askbridge", "redis", "redis-replica", "sentinel-1", "sentinel-2", "sentinel-3"}; !slices.Equal(names, want) {
		t.Fatalf("services %v; want %v", names, want)
	}
	ab := p.Services["askbridge"]
	if v := ab.Environment["REDIS_URL"]; v != nil && *v != "" {
		t.Errorf("REDIS_URL is still %q beside the Sentinels", *v)
	}
	url := ab.Environment["REDIS_SENTINEL_URL"]
	if url == nil || !strings.Contains(*url, "master_name=askbridge") {
		t.Fatalf("REDIS_SENTINEL_URL %v does not name the master", url)
	}
	for _, s := range []string{"sentinel-1", "sentinel-2", "sentinel-3"} {
		if !strings.Contains(*url, s+":26379") {
			t.Errorf("REDIS_SENTINEL_URL %q does not list %s", *url, s)
		}
		if dep, ok := ab.DependsOn[s]; !ok || dep.Condition != types.ServiceConditionHealthy {
			t.Errorf("askbridge does not wait for a healthy %s", s)
		}
		cmd := strings.Join(p.Services[s].Command, " ")
		if !strings.Contains(cmd, "sentinel monitor askbridge redis 6379 2") || !strings.Contains(cmd, "resolve-hostnames yes") {
			t.Errorf("%s does not monitor the primary by its name with a quorum of 2: %q", s, cmd)
		}
	}
	if v := ab.Environment["ASKBRIDGE_REDIS_DURABILITY"]; v == nil || *v != "1" {
		t.Errorf("ASKBRIDGE_REDIS_DURABILITY %v", v)
	}
	replica := strings.Join(p.Services["redis-replica"].Command, " ")
	if !strings.Contains(replica, "--replicaof redis 6379") || !strings.Contains(replica, "--appendonly yes") {
		t.Errorf("redis-replica command %q", replica)
	}
	checkVolume(t, p.Services["redis-replica"], "redis-replica-data", "/data")
	// What compose.yaml settles stays: the primary's append-only file.
	if got := strings.Join(p.Services["redis"].Command, " "); !strings.Contains(got, "--appendonly yes") {
		t.Errorf("redis command %q", got)
	}
}
