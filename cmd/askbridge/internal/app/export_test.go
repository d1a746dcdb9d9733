package app

import (
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/adapters/mcp"
	"github.com/askbridge/askbridge/core"
	redisstore "github.com/askbridge/askbridge/store/redis"
	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel/trace"
)

// What the external tests (package app_test, which import the shared
// helpers of internal/apptest and so cannot be package app) need of the
// program's insides. Only the tests' binary has these names.

type (
	ChatAdapter = chatAdapter
	ChatOpener  = chatOpener
)

const (
	ExitAnswered = exitAnswered
	ExitError    = exitError
	ExitUsage    = exitUsage
	ExitDeclined = exitDeclined
	ExitDenied   = exitDenied

	ExitPartlyApproved = exitPartlyApproved
	ExitApprovedEdited = exitApprovedEdited

	ExitTimedOut    = exitTimedOut
	ExitExpired     = exitExpired
	ExitCancelled   = exitCancelled
	ExitUnreachable = exitUnreachable
	ExitRefused     = exitRefused
	ExitConfig      = exitConfig
)

// NewClientBackend is the stdio MCP process's backend on c.
func NewClientBackend(c *client.Client) mcp.Backend {
	return clientBackend{c: c, url: "test", tokenFrom: "test", keys: newAskKeys()}
}

var (
	ParseFile     = parseFile
	ReadEnv       = readEnv
	ReadyURL      = readyURL
	LiveURL       = liveURL
	VersionString = versionString
	MCPLogLevel   = mcpLogLevel
	OpenSlack     = openSlack
	OpenDiscord   = openDiscord
	OpenTelegram  = openTelegram
	OpenNtfy      = openNtfy
	OpenEmail     = openEmail
	OpenTracing   = openTracing
)

func (s Settings) CoreConfig(actorKey []byte) core.Config { return s.coreConfig(actorKey) }

func (s Settings) Durability() redisstore.Durability { return s.durability }

func (s *Settings) RedisDial() (redisstore.Dial, string, error) { return s.redisDial() }

func (p PersonFile) Person() core.Person { return p.person() }

func (t *tracing) Provider() trace.TracerProvider { return t.provider() }

func (t *tracing) Close(log zerolog.Logger) { t.close(log) }

// ConsoleTokens are the console's sign-in tokens as m's API holds them now.
func (m *Main) ConsoleTokens() consoleTokens { return consoleTokens{m.api.Keys()} }

// SMTPPort is EMAIL_SMTP_PORT as the check read it.
func (e EmailSettings) SMTPPort() int { return e.port }

// SetHookTimeouts sets how long the hook command waits for the server's
// headers, the longest wait it takes the server to have, and its slack
// past the wait, until t ends.
func SetHookTimeouts(t testing.TB, header, maxWait, slack time.Duration) {
	h, m, s := hookHeaderTimeout, hookMaxWait, hookSlack
	hookHeaderTimeout, hookMaxWait, hookSlack = header, maxWait, slack
	t.Cleanup(func() { hookHeaderTimeout, hookMaxWait, hookSlack = h, m, s })
}

// SetRetryPause sets the first pause of the CLI client's retries, until
// t ends.
func SetRetryPause(t testing.TB, d time.Duration) {
	prev := cliRetryPause
	cliRetryPause = d
	t.Cleanup(func() { cliRetryPause = prev })
}
