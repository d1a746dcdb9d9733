// Package telegram holds no code: its tests run the real program
// (internal/app) with Telegram on, against the local fake: the shared
// chat scenarios, long polling, a late start and a refused token. The
// scenarios wait on Telegram's send budgets for over a minute, so they
// are a package of their own, run beside internal/chat's rather than
// after them.
package telegram
