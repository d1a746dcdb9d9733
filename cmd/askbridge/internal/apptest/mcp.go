package apptest

import (
	"os"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/adapters/slack/slackfake"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/core"
)

// AsProgram, set in a child's environment, makes this test binary run the
// real program's main instead of the tests: `askbridge mcp` then runs as
// its own process, over real pipes, exactly as an agent host starts it.
const AsProgram = "ASKBRIDGE_TEST_AS_PROGRAM"

// Main is the TestMain of a package whose tests run its binary as the
// program: the program with AsProgram set, else the tests.
func Main(m *testing.M) {
	if os.Getenv(AsProgram) == "1" {
		app.Exit()
		return
	}
	os.Exit(m.Run())
}

// Bridge is the real program with Slack (a local fake) and one route whose
// deciders are Alice on Slack, any operator on the API, and agent-a's host
// through MCP; its clock moves only when a test says.
type Bridge struct {
	Main       *app.Main
	Slack      *SlackDriver
	Clock      *core.SimClock
	Ops, Agent *client.Client
}

func StartBridge(t *testing.T) *Bridge {
	t.Helper()
	fake := slackfake.New()
	t.Cleanup(fake.Close)
	fake.AddUser(slackfake.User{ID: SlackAlice.ID, Name: SlackAlice.Name})
	env := map[string]string{
		"SLACK_BOT_TOKEN":      "xoxb-test-bot-token",
		"SLACK_SIGNING_SECRET": SlackSecret,
		"SLACK_API_URL":        fake.APIURL(),
	}
	clock := core.NewSimClock(time.Now())
	m := StartClock(t, app.Settings{
		Slack: FromEnv(t, env).Slack,
		File: app.File{Routes: map[string]app.RouteFile{core.DefaultRoute: {
			Rooms:    []core.Room{{Surface: core.SurfaceSlack, ID: SlackRoom}},
			Deciders: map[string][]string{"slack": {SlackAlice.ID}, "api": {"*"}, "mcp": {"agent-a"}},
		}}},
	}, clock)
	return &Bridge{Main: m, Slack: &SlackDriver{Fake: fake, Main: m}, Clock: clock,
		Ops: client.New(m.URL, OpTok), Agent: client.New(m.URL, AgentA)}
}
