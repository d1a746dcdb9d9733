// Package discord holds no code: its tests run the shared chat scenarios
// against the real program (internal/app) with Discord on, on each store,
// against the local fake. They wait on Discord's send budgets for close
// to a minute per store, so they are a package of their own, run beside
// internal/chat's rather than after them.
package discord
