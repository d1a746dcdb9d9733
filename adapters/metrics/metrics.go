// Package metrics is askbridge's Prometheus metrics: it hears core through
// core.Observer, reads the store's gauges (open questions, outbox depth) at
// scrape time, counts open streams and held leases, and serves the text
// exposition format. Labels are fixed words and configured route names
// only: never a question id, a person's id or free text.
package metrics

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

const namespace = "askbridge"

// Metrics is one program's metrics. New registers everything on its own
// registry, so tests and several programs in one process do not collide.
type Metrics struct {
	reg *prometheus.Registry

	asked        *prometheus.CounterVec
	closed       *prometheus.CounterVec
	rules        *prometheus.CounterVec
	timeToAnswer *prometheus.HistogramVec
	refused      *prometheus.CounterVec
	resolves     *prometheus.HistogramVec
	woke         prometheus.Histogram
	deliveries   *prometheus.CounterVec
	retryAfter   *prometheus.HistogramVec
	parked       prometheus.Gauge
	streams      *prometheus.GaugeVec
	leases       *leaseCollector
	reloads      *prometheus.CounterVec
	unrecorded   *prometheus.CounterVec
	store        *storeCollector
}

var _ core.Observer = (*Metrics)(nil)

// Source is where the scrape-time gauges come from: the store's outbox
// stats for the chat surfaces (nil: none). The open questions come from
// SetOpen, since core exists only after the store is wrapped.
type Source struct {
	// Routes are the configured routes: each shows in open_questions,
	// at zero when nothing is open on it.
	Routes   []string
	Outbox   core.OutboxStats
	Surfaces []core.Surface
	// Now is the clock the outbox age and the leases' running out are
	// measured with; nil: the wall clock.
	Now func() time.Time
}

// New makes the metrics for a program of the given version reading src.
func New(version string, src Source) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry(), store: &storeCollector{src: src}, leases: newLeaseCollector(src.Now)}
	f := func(c prometheus.Collector) { m.reg.MustRegister(c) }

	// Time to answer first: how long people take is what matters most.
	m.timeToAnswer = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: namespace, Name: "time_to_answer_seconds",
		Help:    "Time from ask to close, by kind, route and closing state (answered, declined, timed_out, expired, cancelled).",
		Buckets: []float64{5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200, 14400, 28800, 86400, 259200},
	}, []string{"kind", "route", "state"})
	m.asked = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "questions_asked_total",
		Help: "Questions parked, by kind, route and reversibility (repeats of an ask are not counted).",
	}, []string{"kind", "route", "reversibility"})
	m.closed = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "questions_closed_total",
		Help: "Questions closed, by closing state and the surface that closed them.",
	}, []string{"state", "surface"})
	m.rules = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "policy_decisions_total",
		Help: "Asks (and calls of a batch) a route's policy rule decided, by route, rule (its index, from 0) and decision (allow, deny, ask).",
	}, []string{"route", "rule", "decision"})
	m.refused = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "refusals_total",
		Help: "Asks and answers refused, by door (ask, answer) and reason.",
	}, []string{"door", "reason"})
	m.resolves = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: namespace, Name: "resolve_duration_seconds",
		Help:    "Passes through the resolve chokepoint and how long each took, by result; lost counts the attempts that came after a race was won.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
	}, []string{"result"})
	m.woke = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: namespace, Name: "answer_to_wake_seconds",
		Help:    "Time from a question's close to its parked waiter seeing it.",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
	})
	m.deliveries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "deliveries_total",
		Help: "Delivery attempts from the outbox, by surface (the chat surfaces' cards, edits, reminders and digests; " +
			"webhook: calls to callback URLs) and result: sent; retried (failed, due again later); " +
			"rate_limited (asked to wait: see platform_retry_after_seconds); given_up (dropped: refused for good, or out of attempts).",
	}, []string{"surface", "result"})
	m.retryAfter = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: namespace, Name: "platform_retry_after_seconds",
		Help: "Deliveries a surface asked to wait, and the wait asked for, by surface: a 429's Retry-After " +
			"(on Discord, also what is left of a wait asked of the whole bot, which holds back every send), " +
			"an SMTP relay's deferral (email), a webhook receiver's 429 or 503 with Retry-After.",
		Buckets: []float64{.1, .25, .5, 1, 2, 5, 10, 30, 60, 300},
	}, []string{"surface"})
	m.parked = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: namespace, Name: "parked_waits",
		Help: "Callers blocked waiting for a question to close (API long polls and MCP tool calls).",
	})
	m.streams = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: namespace, Name: "open_streams",
		Help: "Open long-lived HTTP requests, by door: events (the SSE event stream), mcp (MCP over HTTP: tool calls in progress and each session's stream) and console (signed-in pages' live updates).",
	}, []string{"door"})
	m.reloads = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "config_reloads_total",
		Help: "Readings of the configuration file after start, by result: ok (applied) or refused (the running configuration stayed).",
	}, []string{"result"})
	m.unrecorded = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "events_unrecorded_total",
		Help: "Events missing from the event log because the store failed to append them, by kind (refused, undelivered, standing_granted, standing_revoked, standing_ended): what they record happened. Anything above zero deserves a look at the store.",
	}, []string{"kind"})
	build := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: namespace, Name: "build_info", Help: "Always 1; the version is a label.",
	}, []string{"version"})
	build.WithLabelValues(version).Set(1)

	for _, c := range []prometheus.Collector{m.timeToAnswer, m.asked, m.closed, m.rules, m.refused, m.resolves, m.woke,
		m.deliveries, m.retryAfter, m.parked, m.streams, m.leases, m.reloads, m.unrecorded, build, m.store,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})} {
		f(c)
	}
	// The series whose labels are known in advance show at zero from the
	// start, so a dashboard and an alert see them before their first event.
	for _, k := range []core.EventKind{core.EventRefused, core.EventUndelivered, core.EventStandingGranted, core.EventStandingRevoked, core.EventStandingEnded} {
		m.unrecorded.WithLabelValues(string(k))
	}
	for _, s := range src.Surfaces {
		for _, r := range []string{core.DeliverySent, core.DeliveryRetried, core.DeliveryRateLimited, core.DeliveryGivenUp} {
			m.deliveries.WithLabelValues(string(s), r)
		}
		m.retryAfter.WithLabelValues(string(s))
	}
	for _, r := range []string{core.ResolveClosed, core.ResolveRecorded, core.ResolveLost, core.ResolveRefused,
		core.ResolveInvalid, core.ResolveNotFound, core.ResolveError} {
		m.resolves.WithLabelValues(r)
	}
	for _, r := range []string{core.RefusedInvalid, core.RefusedConflict} {
		m.refused.WithLabelValues("ask", r)
	}
	for _, r := range []string{core.RefusedForbidden, core.RefusedClosed, core.RefusedExpired, core.RefusedInvalid} {
		m.refused.WithLabelValues("answer", r)
	}
	m.reloads.WithLabelValues(ReloadOK)
	m.reloads.WithLabelValues(ReloadRefused)
	m.zeroClosed()
	m.zeroRoutes(src.Routes)
	m.store.routes.Store(&src.Routes)
	return m
}

// The results of a configuration reload, as config_reloads_total counts
// them.
const (
	ReloadOK      = "ok"
	ReloadRefused = "refused"
)

// Reloaded counts a reading of the configuration file: applied, with the
// routes it names (shown in open_questions and, at zero until their first
// ask, in questions_asked_total from now on), or refused.
func (m *Metrics) Reloaded(applied bool, routes []string) {
	if !applied {
		m.reloads.WithLabelValues(ReloadRefused).Inc()
		return
	}
	routes = slices.Clone(routes)
	m.zeroRoutes(routes)
	m.store.routes.Store(&routes)
	m.reloads.WithLabelValues(ReloadOK).Inc()
}

// SetOpen names where the open questions are listed (core's ListOpen).
// Call it before serving.
func (m *Metrics) SetOpen(list func(ctx context.Context, cursor string, limit int) ([]*core.Question, string, error)) {
	m.store.open = list
}

// Gatherer is what Handler serves, for checks that read the values.
func (m *Metrics) Gatherer() prometheus.Gatherer { return m.reg }

// Handler serves the metrics in Prometheus's text format, or in
// OpenMetrics to a scraper that asks for it, which is the format that
// carries the time-to-answer exemplars.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg, EnableOpenMetrics: true})
}

func reversibility(r core.Reversibility) string {
	if r == "" {
		return "unclassified"
	}
	return string(r)
}

func (m *Metrics) Asked(q *core.Question) {
	m.asked.WithLabelValues(string(q.Kind), q.Route, reversibility(q.Reversibility)).Inc()
	// The route is the one the rule belongs to, which an ask rule may
	// have moved the question away from. A batch counts each call a rule
	// matched.
	if r := q.Rule; r != nil {
		m.rules.WithLabelValues(r.Route, strconv.Itoa(r.Index), string(r.Decide)).Inc()
	}
	for _, c := range q.Calls {
		if r := c.Rule; r != nil {
			m.rules.WithLabelValues(r.Route, strconv.Itoa(r.Index), string(r.Decide)).Inc()
		}
	}
}

func (m *Metrics) Refused(door, reason string) { m.refused.WithLabelValues(door, reason).Inc() }

func (m *Metrics) Resolved(result string, took time.Duration) {
	m.resolves.WithLabelValues(result).Observe(took.Seconds())
}

func (m *Metrics) Closed(q *core.Question) {
	if q == nil || q.Resolution == nil {
		return
	}
	state := string(q.Resolution.State)
	m.closed.WithLabelValues(state, string(core.ClosingSurface(q))).Inc()
	took := seconds(q.Resolution.At.Sub(q.CreatedAt))
	h := m.timeToAnswer.WithLabelValues(string(q.Kind), q.Route, state)
	// A traced question links its bucket to its trace: the exemplar
	// names the trace its ask began (core's Question.TraceParent), when
	// that trace is sampled, so a slow answer leads to its spans.
	if sc := q.SpanContext(); sc.IsSampled() {
		h.(prometheus.ExemplarObserver).ObserveWithExemplar(took, prometheus.Labels{"trace_id": sc.TraceID().String()})
		return
	}
	h.Observe(took)
}

func (m *Metrics) Delivered(s core.Surface, result string, retryAfter time.Duration) {
	m.deliveries.WithLabelValues(string(s), result).Inc()
	if result == core.DeliveryRateLimited {
		m.retryAfter.WithLabelValues(string(s)).Observe(retryAfter.Seconds())
	}
}

func (m *Metrics) Woke(after time.Duration) { m.woke.Observe(seconds(after)) }

// seconds is d as a histogram observes it: never below zero. The two
// ends of a time to answer or to wake are read on different replicas'
// clocks (the ask's, the close's, the waiter's), so a clock a little
// behind another's gives a negative difference, and a negative
// observation lowers the histogram's _sum, which rate() then reads as a
// counter reset.
func seconds(d time.Duration) float64 { return max(0, d.Seconds()) }

func (m *Metrics) Parked(delta int) { m.parked.Add(float64(delta)) }

func (m *Metrics) Unrecorded(kind core.EventKind) { m.unrecorded.WithLabelValues(string(kind)).Inc() }

// Streams counts, in open_streams, the requests to h that stay open: the
// event stream (GET /v1/events, door events), MCP's streamable HTTP
// (/mcp, door mcp) and the console's live updates (GET /stream, door
// console: one for each open page, which a replica holds as it holds the
// others). Other requests pass untouched.
func (m *Metrics) Streams(h http.Handler) http.Handler {
	events, mcp := m.streams.WithLabelValues("events"), m.streams.WithLabelValues("mcp")
	console := m.streams.WithLabelValues("console")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var g prometheus.Gauge
		switch {
		case r.URL.Path == "/v1/events" && r.Method == http.MethodGet:
			g = events
		case r.URL.Path == "/mcp" || strings.HasPrefix(r.URL.Path, "/mcp/"):
			g = mcp
		case r.URL.Path == "/stream" && r.Method == http.MethodGet:
			g = console
		default:
			h.ServeHTTP(w, r)
			return
		}
		g.Inc()
		defer g.Dec()
		h.ServeHTTP(w, r)
	})
}
