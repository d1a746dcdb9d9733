package deploy_test

import (
	"os"
	"testing"
	"time"
)

// serveStop bounds askbridge serve's stop after SIGTERM: Main.Close gives
// its HTTP server 10 s to finish requests, the background loops' last
// bookkeeping (core.Settle) 5 s, and the tracing exporter 5 s to send the
// last spans, one after another (a Telegram update already in hand may
// take longer, on a budget of its own). Whatever stops serve must wait
// longer before it kills it: killed early, its claimed cards wait for
// another replica until policies.outbox_idle and its last spans are lost.
const serveStop = 20 * time.Second

// TestStopOutlastsServesOwnStop holds each way of running askbridge to a
// stop longer than serveStop, after any preStop wait. Before, all three
// gave it exactly 20 s, no more than the bound.
func TestStopOutlastsServesOwnStop(t *testing.T) {
	t.Run("systemd", func(t *testing.T) {
		unit, err := os.ReadFile("systemd/askbridge.service")
		if err != nil {
			t.Fatal(err)
		}
		got := unitSettings(string(unit))["TimeoutStopSec"]
		if len(got) != 1 {
			t.Fatalf("TimeoutStopSec=%q; want one", got)
		}
		d, err := time.ParseDuration(got[0])
		if err != nil || d <= serveStop {
			t.Errorf("TimeoutStopSec=%s (%v); want more than serve's own stop, %s", got[0], err, serveStop)
		}
	})
	t.Run("compose", func(t *testing.T) {
		ab := loadCompose(t).Services["askbridge"]
		if ab.StopGracePeriod == nil || time.Duration(*ab.StopGracePeriod) <= serveStop {
			t.Errorf("stop_grace_period %v; want more than serve's own stop, %s", ab.StopGracePeriod, serveStop)
		}
	})
	for _, kube := range []string{"v1.29.0", "v1.30.0"} {
		t.Run("chart on "+kube, func(t *testing.T) {
			m, err := renderOn(t, kube, map[string]any{})
			if err != nil {
				t.Fatal(err)
			}
			pod := m.deployment.Spec.Template.Spec
			if pod.TerminationGracePeriodSeconds == nil {
				t.Fatal("no terminationGracePeriodSeconds: Kubernetes' 30 s")
			}
			// The grace period counts from the pod's deletion, so the
			// preStop wait comes out of it before SIGTERM is sent.
			grace := time.Duration(*pod.TerminationGracePeriodSeconds) * time.Second
			if ps := pod.Containers[0].Lifecycle; ps != nil && ps.PreStop != nil && ps.PreStop.Sleep != nil {
				grace -= time.Duration(ps.PreStop.Sleep.Seconds) * time.Second
			}
			if grace <= serveStop {
				t.Errorf("terminationGracePeriodSeconds %d leaves serve %s after preStop; want more than its own stop, %s",
					*pod.TerminationGracePeriodSeconds, grace, serveStop)
			}
		})
	}
}

// TestChartWaitsForTheEndpointsBeforeSIGTERM: serve closes its listener
// at SIGTERM, while kube-proxy and Ingress controllers learn that the pod
// is going only a moment later, and meanwhile send it connections that
// are refused (a Slack event, a Discord click, an agent's ask). Before,
// nothing held SIGTERM back, so every rollout refused some. The image has
// no shell to sleep with, so the wait is the kubelet's sleep action,
// which a cluster older than 1.30 refuses: there the chart leaves it out.
func TestChartWaitsForTheEndpointsBeforeSIGTERM(t *testing.T) {
	m, err := renderOn(t, "v1.30.0", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	lc := m.deployment.Spec.Template.Spec.Containers[0].Lifecycle
	if lc == nil || lc.PreStop == nil || lc.PreStop.Sleep == nil || lc.PreStop.Sleep.Seconds < 3 {
		t.Errorf("on Kubernetes 1.30 the container's lifecycle is %+v; want a preStop sleep of a few seconds", lc)
	} else if lc.PreStop.Exec != nil || lc.PreStop.HTTPGet != nil {
		t.Errorf("preStop %+v: the image has no shell, and a preStop takes one action", lc.PreStop)
	}
	old, err := renderOn(t, "v1.29.4", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	if lc := old.deployment.Spec.Template.Spec.Containers[0].Lifecycle; lc != nil {
		t.Errorf("on Kubernetes 1.29 the container's lifecycle is %+v, which that API server refuses", lc)
	}
}
