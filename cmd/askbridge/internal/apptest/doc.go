// Package apptest is what the tests of internal/app, internal/chat and
// internal/console share: the real program started on a free port with
// the test tokens (Start, StartClock, StartMain), the stores to run on
// (Backends, ForEachBackend), settings from an environment (FromEnv), the
// Slack, Discord and Telegram drivers over their fakes, the MCP bridge,
// metrics scrapes and the headless browser. Only test binaries import it.
package apptest
