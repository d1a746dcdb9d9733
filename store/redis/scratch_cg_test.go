package redis_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func cgControl(b *testing.B, args ...string) {
	out, err := exec.Command("callgrind_control", args...).CombinedOutput()
	if err != nil {
		b.Fatalf("%v: %s", err, out)
	}
}

func BenchmarkScratchCallgrind(b *testing.B) {
	ctx := context.Background()
	info, err := sharedClient().Info(ctx, "server").Result()
	if err != nil {
		b.Fatal(err)
	}
	var pid string
	for _, l := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(l, "process_id:"); ok {
			pid = v
		}
	}
	s := benchStore(b)
	qs := closable(b, s)
	at := t0.Add(time.Minute)
	cgControl(b, "-z", pid)
	for _, q := range qs {
		t := answer(q, "op", at)
		t.Read = q
		if _, err := s.Resolve(ctx, t); err != nil {
			b.Fatal(err)
		}
	}
	cgControl(b, "-d", "resolve", pid)
	p := "{" + randomPrefix() + "}"
	ev := `{"question_id":"aaaaaaaaaaaaaaaaa","run_id":"run-bench","at":"2026-03-01T09:01:00Z","kind":"answered","actor":"p-0123456789abcdef","surface":"api"}`
	if err := minimalScript.Load(ctx, sharedClient()).Err(); err != nil {
		b.Fatal(err)
	}
	cgControl(b, "-z", pid)
	for i := range b.N {
		id := string(rune('a'+i%26)) + time.Now().String()
		if err := minimalScript.EvalSha(ctx, sharedClient(), []string{p + ":q:" + id, p + ":events", p + ":wake"}, "0", ev, "aaaaaaaaaaaaaaaaa").Err(); err != nil {
			b.Fatal(err)
		}
	}
	cgControl(b, "-d", "minimal", pid)
}
