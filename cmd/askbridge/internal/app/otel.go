package app

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
)

// Tracing is configured the OpenTelemetry way, by the standard OTEL_*
// environment variables, and is off unless one of them is set: then
// serve runs no provider, no exporter and no goroutine for it, and core
// makes no spans (core/trace.go). These are the variables that switch it
// on; the SDK and its OTLP exporter read them (and the per-signal
// OTEL_EXPORTER_OTLP_TRACES_* forms) themselves.
var tracingVars = []string{
	"OTEL_TRACES_EXPORTER", "OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES",
	"OTEL_TRACES_SAMPLER", "OTEL_TRACES_SAMPLER_ARG",
	"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
	"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
	"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
	"OTEL_EXPORTER_OTLP_TIMEOUT", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT",
	"OTEL_EXPORTER_OTLP_COMPRESSION", "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION",
	"OTEL_EXPORTER_OTLP_INSECURE", "OTEL_EXPORTER_OTLP_TRACES_INSECURE",
	"OTEL_EXPORTER_OTLP_CERTIFICATE", "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE",
	"OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", "OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE",
	"OTEL_EXPORTER_OTLP_CLIENT_KEY", "OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY",
	"OTEL_BSP_SCHEDULE_DELAY", "OTEL_BSP_EXPORT_TIMEOUT", "OTEL_BSP_MAX_QUEUE_SIZE", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE",
}

// samplers are the OTEL_TRACES_SAMPLER values the SDK knows; the ratio
// ones read OTEL_TRACES_SAMPLER_ARG.
var samplers = map[string]bool{
	"always_on": false, "always_off": false, "traceidratio": true,
	"parentbased_always_on": false, "parentbased_always_off": false, "parentbased_traceidratio": true,
}

// tracing is the program's tracing: the SDK's provider while it is on;
// a nil *tracing is off.
type tracing struct {
	tp *sdktrace.TracerProvider
}

// openTracing reads the OTEL_* variables through getenv and returns the
// tracing they ask for: nil when none is set, OTEL_SDK_DISABLED is true
// or OTEL_TRACES_EXPORTER is none. Spans go over OTLP/HTTP (protobuf),
// the exporter's endpoint, headers and timeouts taken from its variables,
// or as JSON to console (stderr) for OTEL_TRACES_EXPORTER=console. A
// value askbridge cannot honour is an error that names its variable.
func openTracing(ctx context.Context, getenv func(string) string, console io.Writer, log zerolog.Logger) (*tracing, error) {
	if v := getenv("OTEL_SDK_DISABLED"); v != "" {
		off, err := strconv.ParseBool(v)
		if err != nil {
			return nil, fmt.Errorf("OTEL_SDK_DISABLED: %q is not true or false", v)
		}
		if off {
			return nil, nil
		}
	}
	set := false
	for _, k := range tracingVars {
		set = set || getenv(k) != ""
	}
	if !set {
		return nil, nil
	}
	if err := checkSampler(getenv); err != nil {
		return nil, err
	}
	exporters, err := traceExporters(getenv)
	if err != nil || len(exporters) == 0 {
		return nil, err
	}
	if err := checkExport(getenv, slices.Contains(exporters, "otlp")); err != nil {
		return nil, err
	}
	res, err := resource.New(ctx, resource.WithSchemaURL(semconv.SchemaURL),
		resource.WithAttributes(semconv.ServiceName("askbridge"), semconv.ServiceVersion(versionString())),
		resource.WithTelemetrySDK(),
		resource.WithFromEnv()) // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win
	if err != nil {
		return nil, fmt.Errorf("OTEL_RESOURCE_ATTRIBUTES: %w", err)
	}
	opts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res)}
	for _, name := range exporters {
		var exp sdktrace.SpanExporter
		switch name {
		case "otlp":
			exp, err = otlptracehttp.New(ctx)
		case "console":
			exp, err = stdouttrace.New(stdouttrace.WithWriter(console))
		}
		if err != nil {
			return nil, fmt.Errorf("OTEL_TRACES_EXPORTER %s: %w", name, err)
		}
		opts = append(opts, sdktrace.WithBatcher(exp))
	}
	// An export that fails (the collector unreachable, say) is logged as
	// ours, not printed by the SDK's own logger.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		log.Warn().Err(err).Str("component", "tracing").Msg("tracing failed")
	}))
	log.Info().Strs("exporters", exporters).Msg("tracing is on")
	return &tracing{tp: sdktrace.NewTracerProvider(opts...)}, nil
}

// traceExporters is what OTEL_TRACES_EXPORTER names (otlp when unset;
// none of them for none), checked against what askbridge can send.
func traceExporters(getenv func(string) string) ([]string, error) {
	v := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER"))
	if v == "" {
		v = "otlp"
	}
	var out []string
	for _, name := range strings.Split(v, ",") {
		switch name = strings.TrimSpace(name); name {
		case "none":
			return nil, nil
		case "otlp", "console":
			out = append(out, name)
		default:
			return nil, fmt.Errorf("OTEL_TRACES_EXPORTER: %q is not one of otlp, console, none", name)
		}
	}
	for _, k := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if p := getenv(k); p != "" {
			if p != "http/protobuf" {
				return nil, fmt.Errorf("%s: %q: askbridge sends OTLP over HTTP as protobuf (http/protobuf); point the endpoint at the collector's HTTP port, 4318 by default", k, p)
			}
			break // the per-signal variable wins
		}
	}
	return out, nil
}

// checkSampler refuses a sampler the SDK would silently replace with its
// default.
func checkSampler(getenv func(string) string) error {
	name := getenv("OTEL_TRACES_SAMPLER")
	if name == "" {
		return nil
	}
	ratio, ok := samplers[name]
	if !ok {
		return fmt.Errorf("OTEL_TRACES_SAMPLER: %q is not one of always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off, parentbased_traceidratio", name)
	}
	if arg := getenv("OTEL_TRACES_SAMPLER_ARG"); ratio && arg != "" {
		if f, err := strconv.ParseFloat(arg, 64); err != nil || f < 0 || f > 1 {
			return fmt.Errorf("OTEL_TRACES_SAMPLER_ARG: %q is not a ratio from 0 to 1", arg)
		}
	}
	return nil
}

// The OTLP exporter and the batch span processor read their own
// variables from the environment, and a value they cannot parse they log
// (through the SDK's logger, in its format) or pass over without a word,
// and carry on with their default: spans sent to https://localhost:4318,
// without the CA or client certificate asked for, uncompressed; a
// negative queue size panics. checkExport reads each the way the SDK does
// (otlptracehttp/internal/envconfig and otlpconfig, sdk/trace/internal/env)
// and refuses, naming the variable, any value the SDK would not take as
// given, before the exporter is built.

// otlpChecks are the exporter's settings askbridge checks, each read
// under OTEL_EXPORTER_OTLP_ and OTEL_EXPORTER_OTLP_TRACES_ (which wins
// when both are set; both must be good), and the check of a value, which
// the exporter trims of spaces. The client certificate and key go as a
// pair (checkClientCert).
var otlpChecks = []struct {
	name  string
	check func(v string) error
}{
	{"ENDPOINT", checkEndpoint},
	{"CERTIFICATE", checkCAFile},
	{"HEADERS", checkHeaders},
	{"TIMEOUT", func(v string) error { return checkInt(v, 0, "a whole number of milliseconds, 0 (no limit) or more") }},
	{"COMPRESSION", func(v string) error {
		if v != "gzip" && v != "none" {
			return fmt.Errorf("%q is not gzip or none", v)
		}
		return nil
	}},
	{"INSECURE", func(v string) error {
		if !strings.EqualFold(v, "true") && !strings.EqualFold(v, "false") {
			return fmt.Errorf("%q is not true or false", v) // the SDK reads anything but true as false
		}
		return nil
	}},
}

// checkExport refuses a value of the exporter's (when otlp is among the
// exporters) or the batch processor's variables that the SDK would drop
// or replace.
func checkExport(getenv func(string) string, otlp bool) error {
	if otlp {
		for _, prefix := range []string{"OTEL_EXPORTER_OTLP_", "OTEL_EXPORTER_OTLP_TRACES_"} {
			for _, c := range otlpChecks {
				if v := strings.TrimSpace(getenv(prefix + c.name)); v != "" {
					if err := c.check(v); err != nil {
						return fmt.Errorf("%s%s: %w", prefix, c.name, err)
					}
				}
			}
			if err := checkClientCert(getenv, prefix+"CLIENT_CERTIFICATE", prefix+"CLIENT_KEY"); err != nil {
				return err
			}
		}
	}
	return checkBatcher(getenv)
}

// checkEndpoint: the exporter sends to the URL's host over http or https
// (its scheme); a URL it cannot parse it drops, and one without a host
// (otel-collector:4318, no scheme) leaves it sending nowhere.
func checkEndpoint(v string) error {
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an http:// or https:// URL with a host, such as http://otel-collector:4318", v)
	}
	return nil
}

// checkCAFile: a file of PEM certificates to trust.
func checkCAFile(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if !x509.NewCertPool().AppendCertsFromPEM(b) {
		return fmt.Errorf("%q holds no PEM certificate", path)
	}
	return nil
}

// checkHeaders: comma-separated key=value, each key an HTTP token and each
// value URL-encoded; the exporter drops a pair it cannot read. A value may
// be a secret (an API key), so an error names the pair by its place.
func checkHeaders(v string) error {
	for i, pair := range strings.Split(v, ",") {
		k, val, ok := strings.Cut(pair, "=")
		if !ok {
			return fmt.Errorf("entry %d has no '=': want key=value,key=value", i+1)
		}
		k = strings.TrimSpace(k)
		if k == "" || strings.IndexFunc(k, notTokenRune) >= 0 {
			return fmt.Errorf("entry %d: %q is not a header name", i+1, k)
		}
		if _, err := url.PathUnescape(val); err != nil {
			return fmt.Errorf("entry %d (%s): the value is not URL-encoded", i+1, k)
		}
	}
	return nil
}

// notTokenRune reports whether r may not be in an HTTP header's name (a
// token: ASCII letters, digits and these marks).
func notTokenRune(r rune) bool {
	return r > unicode.MaxASCII || !(unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("!#$%&'*+-.^_`|~", r))
}

// checkClientCert: the exporter takes a client certificate only with its
// key, and passes over either alone.
func checkClientCert(getenv func(string) string, certVar, keyVar string) error {
	cert, key := strings.TrimSpace(getenv(certVar)), strings.TrimSpace(getenv(keyVar))
	switch {
	case cert == "" && key == "":
		return nil
	case key == "":
		return fmt.Errorf("%s: not set, and %s is: a client certificate goes with its key", keyVar, certVar)
	case cert == "":
		return fmt.Errorf("%s: not set, and %s is: a client key goes with its certificate", certVar, keyVar)
	}
	c, err := os.ReadFile(cert)
	if err != nil {
		return fmt.Errorf("%s: %w", certVar, err)
	}
	k, err := os.ReadFile(key)
	if err != nil {
		return fmt.Errorf("%s: %w", keyVar, err)
	}
	if _, err := tls.X509KeyPair(c, k); err != nil {
		return fmt.Errorf("%s, %s: %q and %q are no certificate and key of one pair: %w", certVar, keyVar, cert, key, err)
	}
	return nil
}

// checkBatcher: the batch processor reads its variables untrimmed as
// whole milliseconds or counts. A delay of 0 would export without pause,
// and a queue or batch of 0 or less drops every span (or panics); a batch
// larger than the queue is silently cut.
func checkBatcher(getenv func(string) string) error {
	queue := sdktrace.DefaultMaxQueueSize
	for _, c := range []struct {
		name, want string
		min        int
		into       *int
	}{
		{"OTEL_BSP_SCHEDULE_DELAY", "a whole number of milliseconds, 1 or more", 1, nil},
		{"OTEL_BSP_EXPORT_TIMEOUT", "a whole number of milliseconds, 0 (no limit) or more", 0, nil},
		{"OTEL_BSP_MAX_QUEUE_SIZE", "a whole number of spans, 1 or more", 1, &queue},
		{"OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "a whole number of spans, 1 or more", 1, nil},
	} {
		v := getenv(c.name)
		if v == "" {
			continue
		}
		if err := checkInt(v, c.min, c.want); err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		if c.into != nil {
			*c.into, _ = strconv.Atoi(v)
		}
	}
	if v := getenv("OTEL_BSP_MAX_EXPORT_BATCH_SIZE"); v != "" {
		if n, _ := strconv.Atoi(v); n > queue {
			return fmt.Errorf("OTEL_BSP_MAX_EXPORT_BATCH_SIZE: %d is more than the queue holds (OTEL_BSP_MAX_QUEUE_SIZE, %d)", n, queue)
		}
	}
	return nil
}

// checkInt: v is a whole number (as strconv.Atoi reads it, the SDK's
// way) of at least min; want says what is wanted.
func checkInt(v string, min int, want string) error {
	if n, err := strconv.Atoi(v); err != nil || n < min {
		return fmt.Errorf("%q is not %s", v, want)
	}
	return nil
}

// provider is what core traces with: nil while tracing is off.
func (t *tracing) provider() trace.TracerProvider {
	if t == nil {
		return nil
	}
	return t.tp
}

// close sends the spans still batched and stops the exporters; a
// collector that does not take them within five seconds costs them, not
// the shutdown.
func (t *tracing) close(log zerolog.Logger) {
	if t == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := t.tp.Shutdown(ctx); err != nil {
		log.Warn().Err(err).Msg("tracing: spans still batched at the stop were not all sent")
	}
}
