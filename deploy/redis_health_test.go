package deploy_test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/internal/redistest"
	"github.com/compose-spec/compose-go/v2/types"
)

// runHealth runs s's health check as the engine would inside its
// container, with redis-cli reaching addr: a redis-cli of the test's
// own on PATH (the image's reaches its own port; the test's servers are
// on free ports, never 6379) drops a leading -p PORT and dials addr. It
// reports whether the check passed (exit 0).
func runHealth(t *testing.T, s types.ServiceConfig, addr string) bool {
	t.Helper()
	real, err := exec.LookPath("redis-cli")
	if err != nil {
		t.Fatal("redis-cli is not installed (it comes with redis-server, which the store's tests need)")
	}
	host, port, _ := net.SplitHostPort(addr)
	dir := t.TempDir()
	shim := fmt.Sprintf("#!/bin/sh\nif [ \"$1\" = -p ]; then shift 2; fi\nexec %q -h %s -p %s \"$@\"\n", real, host, port)
	if err := os.WriteFile(filepath.Join(dir, "redis-cli"), []byte(shim), 0o755); err != nil {
		t.Fatal(err)
	}
	hc := s.HealthCheck
	if hc == nil || len(hc.Test) < 2 {
		t.Fatalf("%s: health check %+v", s.Name, hc)
	}
	var cmd *exec.Cmd
	switch hc.Test[0] {
	case "CMD-SHELL":
		cmd = exec.CommandContext(t.Context(), "sh", "-c", strings.Join(hc.Test[1:], " "))
	case "CMD":
		cmd = exec.CommandContext(t.Context(), hc.Test[1], hc.Test[2:]...)
		if hc.Test[1] == "redis-cli" {
			cmd.Path = filepath.Join(dir, "redis-cli")
		}
	default:
		t.Fatalf("%s: health check %q", s.Name, hc.Test)
	}
	cmd.Env = append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	t.Logf("%s's health check against %s: %v %s", s.Name, addr, err, out)
	return err == nil
}

// TestRedisHealthChecksWantTheRightReply: compose's checks of Redis pass
// on the reply that means it is of use to askbridge, not on any reply:
// redis-cli exits 0 on an error reply, so "redis-cli ping" passed a Redis
// answering LOADING (a restart replaying a long append-only file; here an
// error reply of another kind stands in for it) and askbridge, started
// on it, failed to start; a replica whose link to its primary is down,
// which askbridge's durable writes wait for, passed as it answered PONG;
// and a Sentinel that names no primary for askbridge passed too. The
// replica's check passes once a failover has made it the primary.
func TestRedisHealthChecksWantTheRightReply(t *testing.T) {
	p := loadComposeFiles(t, []string{"compose.yaml", "compose.sentinel.yaml"})
	redis, replica, sentinel := p.Services["redis"], p.Services["redis-replica"], p.Services["sentinel-1"]

	ss := redistest.StartSentinels(t, 1)
	if !runHealth(t, redis, ss.Data[0].Addr()) {
		t.Error("redis's health check fails on a Redis that answers PONG")
	}
	if !runHealth(t, replica, ss.Data[1].Addr()) {
		t.Error("redis-replica's health check fails on a synced replica")
	}
	if !runHealth(t, sentinel, ss.Sentinels[0].Addr()) {
		t.Error("the Sentinels' health check fails on a Sentinel that names the primary")
	}

	refusing := redistest.Start(t)
	if _, err := refusing.Do("CONFIG", "SET", "requirepass", "not-this-one"); err != nil {
		t.Fatal(err)
	}
	if runHealth(t, redis, refusing.Addr()) {
		t.Error("redis's health check passes on a Redis that answers every command with an error")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := ln.Addr().(*net.TCPAddr)
	ln.Close()
	orphan := redistest.Start(t)
	if !runHealth(t, replica, orphan.Addr()) {
		t.Error("redis-replica's health check fails on a primary, as a failover leaves it")
	}
	if _, err := orphan.Do("REPLICAOF", "127.0.0.1", fmt.Sprint(gone.Port)); err != nil {
		t.Fatal(err)
	}
	if runHealth(t, replica, orphan.Addr()) {
		t.Error("redis-replica's health check passes on a replica whose primary is gone")
	}
	if _, err := ss.Sentinels[1].Do("SENTINEL", "REMOVE", ss.Master); err != nil {
		t.Fatal(err)
	}
	if runHealth(t, sentinel, ss.Sentinels[1].Addr()) {
		t.Error("the Sentinels' health check passes on a Sentinel that names no primary for askbridge")
	}
}
