package app_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
)

// certPair writes a self-signed certificate and its key as PEM files in
// dir, named name.pem and name.key.
func certPair(t *testing.T, dir, name string) (cert, key string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	cert, key = filepath.Join(dir, name+".pem"), filepath.Join(dir, name+".key")
	if err := os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return cert, key
}

// TestTracingRefusesExportValuesTheSDKWouldDrop: each variable the OTLP
// exporter and the batch span processor read themselves is checked as
// they parse it. A value they would take starts tracing; one they would
// log (in the SDK's own format, or not at all) and replace with a
// default stops it with an error naming the variable. Before, tracing started "on" with its defaults:
// spans to https://localhost:4318, a CA file that could not be read left
// out, a timeout of "10s" replaced by the default; a queue size of -1
// panicked.
func TestTracingRefusesExportValuesTheSDKWouldDrop(t *testing.T) {
	dir := t.TempDir()
	cert, key := certPair(t, dir, "client")
	otherCert, _ := certPair(t, dir, "other")
	notPEM := filepath.Join(dir, "not.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	const (
		otlp   = "OTEL_EXPORTER_OTLP_"
		traces = "OTEL_EXPORTER_OTLP_TRACES_"
	)
	type env = map[string]string
	good := []env{
		{otlp + "ENDPOINT": "http://otel-collector:4318"},
		{otlp + "ENDPOINT": "https://collector.example.com/otlp"},
		{traces + "ENDPOINT": "http://127.0.0.1:4318/v1/traces"},
		{otlp + "CERTIFICATE": cert},
		{traces + "CERTIFICATE": " " + cert + " "}, // the exporter trims
		{otlp + "CLIENT_CERTIFICATE": cert, otlp + "CLIENT_KEY": key},
		{traces + "CLIENT_CERTIFICATE": cert, traces + "CLIENT_KEY": key},
		{otlp + "HEADERS": "api-key=s3cr%2Ft,x-team=ops"},
		{traces + "HEADERS": "authorization=Bearer%20abc"},
		{otlp + "TIMEOUT": "10000"},
		{traces + "TIMEOUT": "0"},
		{otlp + "COMPRESSION": "gzip"},
		{traces + "COMPRESSION": "none"},
		{otlp + "INSECURE": "true"},
		{traces + "INSECURE": "FALSE"},
		{"OTEL_BSP_SCHEDULE_DELAY": "5000"},
		{"OTEL_BSP_EXPORT_TIMEOUT": "0"},
		{"OTEL_BSP_MAX_QUEUE_SIZE": "4096", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "4096"},
		{"OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "512"},
		// Console alone sends nothing over OTLP: its variables are not read.
		{"OTEL_TRACES_EXPORTER": "console", otlp + "ENDPOINT": "::not a url::"},
	}
	bad := []struct {
		env  env
		want string // the error's start: the variable it names
	}{
		{env{otlp + "ENDPOINT": "http://[otel-collector:4318"}, otlp + "ENDPOINT: "},
		{env{otlp + "ENDPOINT": "otel-collector:4318"}, otlp + "ENDPOINT: "},
		{env{otlp + "ENDPOINT": "grpc://otel-collector:4317"}, otlp + "ENDPOINT: "},
		{env{traces + "ENDPOINT": "::not a url::"}, traces + "ENDPOINT: "},
		{env{traces + "ENDPOINT": "http://127.0.0.1:4318/v1/traces", otlp + "ENDPOINT": "http://"}, otlp + "ENDPOINT: "},
		{env{otlp + "CERTIFICATE": filepath.Join(dir, "missing.pem")}, otlp + "CERTIFICATE: "},
		{env{traces + "CERTIFICATE": notPEM}, traces + "CERTIFICATE: "},
		{env{otlp + "CLIENT_CERTIFICATE": cert}, otlp + "CLIENT_KEY: "},
		{env{traces + "CLIENT_KEY": key}, traces + "CLIENT_CERTIFICATE: "},
		{env{otlp + "CLIENT_CERTIFICATE": cert, traces + "CLIENT_KEY": key}, otlp + "CLIENT_KEY: "},
		{env{otlp + "CLIENT_CERTIFICATE": filepath.Join(dir, "missing.pem"), otlp + "CLIENT_KEY": key}, otlp + "CLIENT_CERTIFICATE: "},
		{env{otlp + "CLIENT_CERTIFICATE": otherCert, otlp + "CLIENT_KEY": key}, otlp + "CLIENT_CERTIFICATE, " + otlp + "CLIENT_KEY: "},
		{env{otlp + "HEADERS": "Bearer abc"}, otlp + "HEADERS: entry 1 has no '='"},
		{env{traces + "HEADERS": "api-key=x,bad key=y"}, traces + "HEADERS: entry 2: "},
		{env{otlp + "HEADERS": "api-key=100%"}, otlp + "HEADERS: entry 1 (api-key): "},
		{env{otlp + "TIMEOUT": "10s"}, otlp + "TIMEOUT: "},
		{env{traces + "TIMEOUT": "-1"}, traces + "TIMEOUT: "},
		{env{otlp + "COMPRESSION": "zstd"}, otlp + "COMPRESSION: "},
		{env{traces + "COMPRESSION": "GZIP"}, traces + "COMPRESSION: "},
		{env{otlp + "INSECURE": "yes please"}, otlp + "INSECURE: "},
		{env{traces + "INSECURE": "1"}, traces + "INSECURE: "},
		{env{"OTEL_BSP_SCHEDULE_DELAY": "5s"}, "OTEL_BSP_SCHEDULE_DELAY: "},
		{env{"OTEL_BSP_SCHEDULE_DELAY": "0"}, "OTEL_BSP_SCHEDULE_DELAY: "},
		{env{"OTEL_BSP_EXPORT_TIMEOUT": " 3000"}, "OTEL_BSP_EXPORT_TIMEOUT: "}, // the processor does not trim
		{env{"OTEL_BSP_EXPORT_TIMEOUT": "-5"}, "OTEL_BSP_EXPORT_TIMEOUT: "},
		{env{"OTEL_BSP_MAX_QUEUE_SIZE": "-1"}, "OTEL_BSP_MAX_QUEUE_SIZE: "},
		{env{"OTEL_BSP_MAX_QUEUE_SIZE": "lots"}, "OTEL_BSP_MAX_QUEUE_SIZE: "},
		{env{"OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "0"}, "OTEL_BSP_MAX_EXPORT_BATCH_SIZE: "},
		{env{"OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "4096"}, "OTEL_BSP_MAX_EXPORT_BATCH_SIZE: "}, // more than the default queue, 2048
		{env{"OTEL_BSP_MAX_QUEUE_SIZE": "100", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "200"}, "OTEL_BSP_MAX_EXPORT_BATCH_SIZE: "},
	}

	// The SDK reads the process environment itself, so the variables are
	// set there, as serve's are.
	open := func(t *testing.T, e env) (bool, error) {
		t.Helper()
		for k, v := range e {
			t.Setenv(k, v)
		}
		tr, err := app.OpenTracing(t.Context(), os.Getenv, io.Discard, zerolog.Nop())
		on := tr != nil
		tr.Close(zerolog.Nop())
		return on, err
	}
	for _, e := range good {
		t.Run("good", func(t *testing.T) {
			if on, err := open(t, e); err != nil || !on {
				t.Errorf("%v: tracing on %v, %v; want on", e, on, err)
			}
		})
	}
	for _, tt := range bad {
		t.Run("bad", func(t *testing.T) {
			on, err := open(t, tt.env)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) || on {
				t.Errorf("%v: tracing on %v, %v; want off with an error starting %q", tt.env, on, err, tt.want)
			}
			if strings.Contains(tt.want, "HEADERS") && err != nil && (strings.Contains(err.Error(), "abc") || strings.Contains(err.Error(), "100%")) {
				t.Errorf("%v: the error %q quotes a header's value, which may be a secret", tt.env, err)
			}
		})
	}
}
