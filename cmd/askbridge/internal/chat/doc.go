// Package chat holds no code: its tests run the real program (internal/app)
// against each chat platform's fake and the shared scenarios of
// adapters/adaptertest (Slack, Teams, the one-way ntfy and email doors),
// the batch scenarios across surfaces, mixed-surface quorums, the metrics
// a run of the Slack scenarios leaves, and the Slack and Teams card
// previews. Discord's and Telegram's scenarios, a minute or more each of
// waiting on send budgets, are the packages under this one, so that
// go test runs them beside these, each package well inside its timeout.
package chat
