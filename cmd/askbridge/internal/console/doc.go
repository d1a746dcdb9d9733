// Package console holds no code: its tests drive the real program's
// (internal/app) web console in a headless Chromium: the inbox, live
// updates, approvals, history, drafts, phone widths, axe checks and the
// screenshots kept under adapters/console/testdata. They are a package of
// their own so that go test runs them beside the other packages.
package console
