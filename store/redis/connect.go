package redis

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/url"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/askbridge/askbridge/core"
)

// Topology is how a Redis is reached: one server, a primary that Sentinel
// names, or a cluster.
type Topology int

const (
	// Single is one server (or a proxy in front of several); its URL is
	// go-redis's ParseURL form, redis[s]://[user:password@]host:port[/db].
	Single Topology = iota
	// Sentinel is a primary that a set of Sentinels names and fails over;
	// its URL is go-redis's ParseFailoverURL form: the Sentinels' addresses
	// (host and port, more as addr=), master_name=, and the data nodes'
	// credentials as username= and password= (the user and password before
	// the host are the Sentinels' own).
	Sentinel
	// Cluster is a Redis Cluster; its URL is go-redis's ParseClusterURL
	// form: one seed node as the host, more as addr=.
	Cluster
)

func (t Topology) String() string {
	switch t {
	case Sentinel:
		return "sentinel"
	case Cluster:
		return "cluster"
	}
	return "single"
}

// Failover timing the clients are given unless their URL says otherwise.
// go-redis's own defaults suit a Redis that never moves: a cluster client
// reloads its slot map only after a redirect or every minute, so after a
// primary dies it keeps dialling the dead address for up to a minute, and
// it shuns a node it saw failing for 15 s. These keep the gap a failover
// makes to the time the servers take to promote a replica, plus a second
// or two.
const (
	// clusterReload bounds how stale the slot map gets: one CLUSTER SLOTS
	// per client a second, against minutes of errors.
	clusterReload = time.Second
	// clusterFailing is how long a node that failed is avoided.
	clusterFailing = 2 // seconds
	// failoverRetries and failoverBackoff: a command that meets a
	// failover's errors (READONLY, CLUSTERDOWN, LOADING, a refused
	// connection) is tried again inside the client for about this long
	// before the error reaches askbridge, which then answers 503.
	failoverRetries    = 6
	failoverMinBackoff = 50 * time.Millisecond
	failoverMaxBackoff = 500 * time.Millisecond
)

// Dial is how to connect: a topology, its URL, and optionally the CA
// certificates that a rediss:// server's certificate must chain to (nil:
// the system's).
type Dial struct {
	Topology Topology
	URL      string
	RootCAs  *x509.CertPool
}

// Client parses d's URL with go-redis's own parser for its topology and
// returns the client, tuned to follow a failover within seconds (see
// clusterReload). Nothing is dialled yet: a bad URL is refused here, an
// unreachable server when the Store is opened.
func (d Dial) Client() (goredis.UniversalClient, error) {
	switch d.Topology {
	case Single:
		o, err := goredis.ParseURL(d.URL)
		if err != nil {
			return nil, badURL(d.URL, err)
		}
		if err := d.tls(o.TLSConfig); err != nil {
			return nil, err
		}
		return goredis.NewClient(o), nil
	case Sentinel:
		o, err := d.failoverOptions()
		if err != nil {
			return nil, err
		}
		return goredis.NewFailoverClient(o), nil
	case Cluster:
		o, err := goredis.ParseClusterURL(d.URL)
		if err != nil {
			return nil, badURL(d.URL, err)
		}
		if o.ReadOnly || o.RouteByLatency || o.RouteRandomly {
			return nil, core.Errorf(core.CodeInvalid, "redis dial", "read_only, route_by_latency and route_randomly would read from replicas, which may not yet hold what askbridge just wrote")
		}
		if err := d.tls(o.TLSConfig); err != nil {
			return nil, err
		}
		q := query(d.URL)
		if !q.Has("max_redirects") {
			o.MaxRedirects = failoverRetries
		}
		if !q.Has("min_retry_backoff") {
			o.MinRetryBackoff = failoverMinBackoff
		}
		if !q.Has("max_retry_backoff") {
			o.MaxRetryBackoff = failoverMaxBackoff
		}
		o.ClusterStateReloadInterval = clusterReload
		o.FailingTimeoutSeconds = clusterFailing
		return goredis.NewClusterClient(o), nil
	}
	return nil, core.Errorf(core.CodeInvalid, "redis dial", "unknown topology %d", d.Topology)
}

// failoverOptions parses a Sentinel URL, tuned as Client says.
func (d Dial) failoverOptions() (*goredis.FailoverOptions, error) {
	o, err := goredis.ParseFailoverURL(d.URL)
	if err != nil {
		return nil, badURL(d.URL, err)
	}
	if o.MasterName == "" {
		return nil, core.Errorf(core.CodeInvalid, "redis dial", "a Sentinel URL needs master_name= (the name the Sentinels monitor the primary by)")
	}
	if o.ReplicaOnly || o.RouteByLatency || o.RouteRandomly {
		return nil, core.Errorf(core.CodeInvalid, "redis dial", "replica_only, route_by_latency and route_randomly would read from replicas, which may not yet hold what askbridge just wrote")
	}
	if err := d.tls(o.TLSConfig); err != nil {
		return nil, err
	}
	q := query(d.URL)
	if !q.Has("max_retries") {
		o.MaxRetries = failoverRetries
	}
	if !q.Has("min_retry_backoff") {
		o.MinRetryBackoff = failoverMinBackoff
	}
	if !q.Has("max_retry_backoff") {
		o.MaxRetryBackoff = failoverMaxBackoff
	}
	return o, nil
}

// tls applies RootCAs to a parsed URL's TLS settings (nil for redis://).
func (d Dial) tls(c *tls.Config) error {
	if d.RootCAs == nil {
		return nil
	}
	if c == nil {
		return core.Errorf(core.CodeInvalid, "redis dial", "CA certificates are given but the URL is redis://, not rediss://")
	}
	c.RootCAs = d.RootCAs
	return nil
}

// badURL is raw's parse error without the URL in it: url.Parse quotes the
// whole URL, password included, in its errors, and its inner error may
// quote a piece of it (a password holding a / reads as a bad port:
// `invalid port ":abc"`). So a URL with credentials gets no parser's
// words at all, only what to check.
func badURL(raw string, err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if _, rest, ok := strings.Cut(raw, "://"); ok && strings.Contains(rest, "@") {
		return core.Errorf(core.CodeInvalid, "redis dial", "bad Redis URL: it does not parse (in a password, / ? # @ and : must be percent-encoded)")
	}
	return core.Errorf(core.CodeInvalid, "redis dial", "bad Redis URL: %v", err)
}

// query is the URL's query, or none for a URL that does not parse (which
// the go-redis parser has refused already).
func query(raw string) url.Values {
	u, err := url.Parse(raw)
	if err != nil {
		return url.Values{}
	}
	return u.Query()
}

// Connect dials d and opens a Store on the client, which the Store then
// owns and closes on Close. On Sentinel the Store also follows the
// Sentinels' word that the primary moved, and moves its subscription to
// wake-ups with it (sentinels.go).
func Connect(ctx context.Context, d Dial, opts Options) (*Store, error) {
	client, err := d.Client()
	if err != nil {
		return nil, err
	}
	if d.Topology == Sentinel {
		// Parsed again: the watch's own copy, which the client's
		// construction cannot touch.
		if opts.sentinel, err = d.failoverOptions(); err != nil {
			_ = client.Close()
			return nil, err
		}
	}
	s, err := New(ctx, client, opts)
	if err != nil {
		_ = client.Close()
		return nil, err
	}
	s.owned = true
	return s, nil
}

// Topology reports how the Store reaches Redis.
func (s *Store) Topology() Topology {
	switch c := s.base().(type) {
	case *goredis.ClusterClient:
		return Cluster
	case *goredis.Client:
		if c.Options().Addr == "FailoverClient" {
			return Sentinel
		}
	}
	return Single
}
