package app

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

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
