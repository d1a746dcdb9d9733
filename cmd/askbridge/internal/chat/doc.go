// Package chat holds no code: its tests run the real program (internal/app)
// against each chat platform's fake and the shared scenarios of
// adapters/adaptertest (Slack, Discord, Telegram, Teams, the one-way ntfy
// and email doors), the batch scenarios across surfaces, mixed-surface
// quorums, the metrics a run of the Slack scenarios leaves, and the Slack
// and Teams card previews. They are a package of their own so that
// go test runs them beside the other packages, each well inside its
// timeout.
package chat
