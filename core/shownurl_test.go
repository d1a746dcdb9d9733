package core_test

import (
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
)

// A receiver's secret in its URL's path (a chat's /api/webhooks/<id>/
// <token>, a workflow tool's /hooks/catch/<account>/<secret>) is not
// shown, as one in its query is not: the event log that shows it is read
// with a read token.
func TestShownURLHidesSecretsInThePath(t *testing.T) {
	for _, c := range []struct{ raw, want, secret string }{
		{"https://discord.example/api/webhooks/123/tok3n-abc", "https://discord.example/api/…", "tok3n-abc"},
		{"https://hooks.example/hooks/catch/42/s3cret/", "https://hooks.example/hooks/…", "s3cret"},
		{"https://hooks.example/services/T0/B0/XXXsecretXXX", "https://hooks.example/services/…", "XXXsecretXXX"},
		{"https://u:pw@recv.example/done?token=q5ecret#frag", "https://recv.example/done", "q5ecret"},
		{"https://recv.example/", "https://recv.example/", ""},
		{"https://recv.example", "https://recv.example", ""},
		{"http://127.0.0.1:8080/hooks/", "http://127.0.0.1:8080/hooks/", ""},
	} {
		got := core.ShownURL(c.raw)
		if got != c.want || (c.secret != "" && strings.Contains(got, c.secret)) {
			t.Errorf("ShownURL(%q) = %q, want %q", c.raw, got, c.want)
		}
	}
}
