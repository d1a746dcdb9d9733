package metrics

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/singleflight"
)

// storeCollector reads the store at scrape time: what is open, by route
// and reversibility, and how deep each outbox is and how old its oldest
// entry. Reading at scrape keeps every replica's numbers the store's
// numbers, not the replica's own share.
type storeCollector struct {
	src Source
	// routes is src.Routes as the last configuration loaded named them.
	routes atomic.Pointer[[]string]
	open   func(ctx context.Context, cursor string, limit int) ([]*core.Question, string, error)
	// reads lets scrapes that overlap share one reading of the store.
	reads singleflight.Group
}

var (
	openDesc = prometheus.NewDesc(namespace+"_open_questions",
		"Open questions in the store, by route and reversibility.", []string{"route", "reversibility"}, nil)
	depthDesc = prometheus.NewDesc(namespace+"_outbox_depth",
		"Deliveries waiting in the store's outbox, by surface.", []string{"surface"}, nil)
	ageDesc = prometheus.NewDesc(namespace+"_outbox_oldest_age_seconds",
		"Age of the oldest delivery waiting in the outbox, by surface (0 when empty).", []string{"surface"}, nil)
	cappedDesc = prometheus.NewDesc(namespace+"_open_questions_capped",
		"1 when this scrape stopped counting open questions at its bound (20,000): open_questions is then a floor, not the count.", nil, nil)
	scrapeErrDesc = prometheus.NewDesc(namespace+"_store_scrape_errors",
		"1 when reading the store for this scrape failed (the store gauges are then missing).", nil, nil)
)

// maxOpenScan bounds the open-question scan of one scrape.
const maxOpenScan = 20000

func (c *storeCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- openDesc
	ch <- cappedDesc
	ch <- depthDesc
	ch <- ageDesc
	ch <- scrapeErrDesc
}

// Collect answers a scrape from the reading of the store in progress, or
// from a new one when none is. Scrapes that overlap (the two servers of
// an HA pair, a burst on the metrics listener) thus wait for one reading
// of at most storeReadTimeout, rather than each queueing a reading of
// its own behind the others': that took a slow store's time once per
// scrape waiting, past a scraper's timeout (it then loses every series
// of the replica, not only the store's), and a burst went on loading
// the store long after its clients had left.
func (c *storeCollector) Collect(ch chan<- prometheus.Metric) {
	v, _, _ := c.reads.Do("store", func() (any, error) { return c.read(), nil })
	for _, m := range v.([]prometheus.Metric) {
		ch <- m
	}
}

// storeReadTimeout bounds one reading of the store.
const storeReadTimeout = 5 * time.Second

// read reads the store gauges. Metrics made with MustNewConstMetric
// never change, so one reading can answer several scrapes.
func (c *storeCollector) read() []prometheus.Metric {
	ctx, cancel := context.WithTimeout(context.Background(), storeReadTimeout)
	defer cancel()
	var out []prometheus.Metric
	failed := 0.0
	if c.open != nil {
		if counts, capped, err := c.countOpen(ctx); err != nil {
			failed = 1
		} else {
			for k, n := range counts {
				out = append(out, prometheus.MustNewConstMetric(openDesc, prometheus.GaugeValue, float64(n), k[0], k[1]))
			}
			v := 0.0
			if capped {
				v = 1
			}
			out = append(out, prometheus.MustNewConstMetric(cappedDesc, prometheus.GaugeValue, v))
		}
	}
	now := time.Now
	if c.src.Now != nil {
		now = c.src.Now
	}
	if c.src.Outbox != nil {
		for _, s := range c.src.Surfaces {
			st, err := c.src.Outbox.OutboxStat(ctx, s)
			if err != nil {
				failed = 1
				continue
			}
			age := 0.0
			if st.Depth > 0 && !st.Oldest.IsZero() {
				age = seconds(now().Sub(st.Oldest))
			}
			out = append(out, prometheus.MustNewConstMetric(depthDesc, prometheus.GaugeValue, float64(st.Depth), string(s)))
			out = append(out, prometheus.MustNewConstMetric(ageDesc, prometheus.GaugeValue, age, string(s)))
		}
	}
	return append(out, prometheus.MustNewConstMetric(scrapeErrDesc, prometheus.GaugeValue, failed))
}

// countOpen counts the open questions by route and reversibility, up to
// maxOpenScan of them; capped says it stopped there (a backlog, when the
// count matters most, must not read as a flat line).
func (c *storeCollector) countOpen(ctx context.Context) (counts map[[2]string]int, capped bool, err error) {
	counts = map[[2]string]int{}
	for _, r := range *c.routes.Load() {
		for _, rev := range []core.Reversibility{core.Reversible, core.HardToReverse} {
			counts[[2]string{r, string(rev)}] = 0
		}
	}
	cursor, seen := "", 0
	for {
		qs, next, err := c.open(ctx, cursor, 500)
		if err != nil {
			return nil, false, err
		}
		for _, q := range qs {
			counts[[2]string{q.Route, reversibility(q.Reversibility)}]++
		}
		seen += len(qs)
		if next == "" || seen >= maxOpenScan {
			return counts, next != "", nil
		}
		cursor = next
	}
}
