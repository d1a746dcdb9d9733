package app_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/redistest"
	redisstore "github.com/askbridge/askbridge/store/redis"
)

func TestRedisSettingsNameTheBadVariable(t *testing.T) {
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"two topologies", map[string]string{"REDIS_URL": "redis://a:6379", "REDIS_CLUSTER_URL": "redis://b:7000"},
			"REDIS_URL and REDIS_CLUSTER_URL: set one of"},
		{"a bad scheme", map[string]string{"REDIS_URL": "http://a:6379"}, "REDIS_URL: redis dial: bad Redis URL"},
		{"an unknown option", map[string]string{"REDIS_CLUSTER_URL": "redis://a:7000?colour=red"}, "REDIS_CLUSTER_URL: redis dial: bad Redis URL"},
		// A password with a / in it reads to the parser as a bad port, which
		// its error quoted (":abc"): the refusal says what to check instead.
		{"a password not encoded", map[string]string{"REDIS_URL": "redis://u:abc/def@h:6379"}, "REDIS_URL: redis dial: bad Redis URL: it does not parse (in a password"},
		{"a cluster reading replicas", map[string]string{"REDIS_CLUSTER_URL": "redis://a:7000?read_only=true"}, "REDIS_CLUSTER_URL: redis dial: read_only"},
		{"Sentinel without a master", map[string]string{"REDIS_SENTINEL_URL": "redis://s1:26379?addr=s2:26379"}, "REDIS_SENTINEL_URL: redis dial: a Sentinel URL needs master_name="},
		{"Sentinel reading replicas", map[string]string{"REDIS_SENTINEL_URL": "redis://s1:26379?master_name=m&replica_only=true"}, "REDIS_SENTINEL_URL: redis dial: replica_only"},
		{"a CA without Redis", map[string]string{"REDIS_TLS_CA_FILE": ca}, "REDIS_TLS_CA_FILE: set, but no Redis is"},
		{"a CA that is not PEM", map[string]string{"REDIS_URL": "rediss://a:6379", "REDIS_TLS_CA_FILE": ca}, "REDIS_TLS_CA_FILE: " + ca + " holds no PEM certificate"},
		{"durability without Redis", map[string]string{"ASKBRIDGE_REDIS_DURABILITY": "1"}, "ASKBRIDGE_REDIS_DURABILITY: set, but no Redis is"},
		{"durability below zero", map[string]string{"REDIS_URL": "redis://a:6379", "ASKBRIDGE_REDIS_DURABILITY": "-1"}, "ASKBRIDGE_REDIS_DURABILITY: \"-1\""},
		{"durability not a number", map[string]string{"REDIS_URL": "redis://a:6379", "ASKBRIDGE_REDIS_DURABILITY": "replica"}, "ASKBRIDGE_REDIS_DURABILITY: \"replica\""},
		{"a wait too long", map[string]string{"REDIS_URL": "redis://a:6379", "ASKBRIDGE_REDIS_DURABILITY": "1", "ASKBRIDGE_REDIS_DURABILITY_TIMEOUT": "1m"}, "ASKBRIDGE_REDIS_DURABILITY_TIMEOUT: \"1m\""},
		{"a CA file missing", map[string]string{"REDIS_URL": "rediss://a:6379", "REDIS_TLS_CA_FILE": ca + ".gone"}, "REDIS_TLS_CA_FILE: open"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := app.LoadSettings(func(k string) string { return tt.env[k] })
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to start %q", err, tt.want)
			}
		})
	}
}

func TestRedisSettingsNeverQuoteThePassword(t *testing.T) {
	for _, v := range []string{"REDIS_URL", "REDIS_SENTINEL_URL", "REDIS_CLUSTER_URL"} {
		env := map[string]string{v: "redis://user:hunter2secret@a:port-is-not-a-number"}
		_, err := app.LoadSettings(func(k string) string { return env[k] })
		if err == nil || !strings.HasPrefix(err.Error(), v+": ") {
			t.Fatalf("%s: err = %v, want it to name the variable", v, err)
		}
		if strings.Contains(err.Error(), "hunter2secret") {
			t.Fatalf("%s: the error quotes the password: %v", v, err)
		}
	}
}

func TestRedisSettingsPickTheTopology(t *testing.T) {
	tests := []struct {
		env  map[string]string
		name string
		want redisstore.Topology
	}{
		{map[string]string{"REDIS_URL": "redis://a:6379/0"}, "REDIS_URL", redisstore.Single},
		{map[string]string{"REDIS_SENTINEL_URL": "redis://s1:26379?master_name=m&addr=s2:26379&password=p"}, "REDIS_SENTINEL_URL", redisstore.Sentinel},
		{map[string]string{"REDIS_CLUSTER_URL": "rediss://a:7000?addr=b:7000&dial_timeout=2s"}, "REDIS_CLUSTER_URL", redisstore.Cluster},
		{map[string]string{}, "", redisstore.Single},
	}
	for _, tt := range tests {
		s := apptest.FromEnv(t, tt.env)
		if s.Durability().Replicas != 0 || s.Durability().Timeout != time.Second {
			t.Errorf("%v: durability %+v, want off with the 1s default", tt.env, s.Durability())
		}
		d, name, err := s.RedisDial()
		if err != nil || name != tt.name || (name != "" && d.Topology != tt.want) {
			t.Errorf("%v: got %v %q %v, want %v %q", tt.env, d.Topology, name, err, tt.want, tt.name)
		}
	}
}

func TestRedisDurabilitySetting(t *testing.T) {
	s := apptest.FromEnv(t, map[string]string{"REDIS_SENTINEL_URL": "redis://s1:26379?master_name=m",
		"ASKBRIDGE_REDIS_DURABILITY": "1", "ASKBRIDGE_REDIS_DURABILITY_TIMEOUT": "250ms"})
	if want := (redisstore.Durability{Replicas: 1, Timeout: 250 * time.Millisecond}); s.Durability() != want {
		t.Fatalf("durability %+v, want %+v", s.Durability(), want)
	}
}

// TestServeOnAClusterFromAnySeed runs the real program on a cluster of
// three primaries, reached through a seed that serves none of the first
// shard's slot, with three shards: it starts, and an ask and its answer
// go through whichever primaries own their shards.
func TestServeOnAClusterFromAnySeed(t *testing.T) {
	c := redistest.StartReplicatedCluster(t, 3, 0)
	s := app.Settings{RedisClusterURL: app.Secret("redis://" + c.Nodes[2].Addr())}
	s.File.Policies.Shards = 3
	m := apptest.Start(t, s)
	agent, ops := client.New(m.URL, apptest.AgentA), client.New(m.URL, apptest.OpTok)
	for i := range 6 { // over every shard, likely; two per primary at most
		q, err := agent.Ask(t.Context(), client.AskRequest{Kind: core.KindClarification, Question: "Which region?",
			Reversibility: core.HardToReverse, RunID: "run-cluster", ToolCallID: fmt.Sprintf("call-%d", i)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ops.Answer(t.Context(), q.ID, client.AnswerRequest{Answer: "eu-west-1"}); err != nil {
			t.Fatal(err)
		}
		res, err := agent.WaitOnce(t.Context(), q.ID, 0)
		if err != nil || res.State != core.StateAnswered {
			t.Fatalf("wait on %s: %+v %v", q.ID, res, err)
		}
	}
	resp, err := http.Get(m.URL + "/readyz")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("readyz on the cluster: %v %v", resp, err)
	}
	resp.Body.Close()
}
