package telegram

import (
	"strconv"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/askbridge/askbridge/internal/logbuf"
)

// TestWebhookSkipsTheUnreadable: an update the webhook cannot read is
// answered 200 and logged by its id alone, as the poller skips one (its
// offset moves past it). Before, it was answered 400, and Telegram
// redelivered it again and again, holding back the bot's later updates
// meanwhile. So is one too long to read. Nothing of their content
// reaches the log: a JSON error quotes the number it could not read.
func TestWebhookSkipsTheUnreadable(t *testing.T) {
	e := newEnv(t, nil)
	logs := &logbuf.Buffer{}
	e.a.log = zerolog.New(logs)
	e.run()
	for i, u := range []map[string]any{
		{"update_id": 7001, "message": map[string]any{"message_id": 1, "chat": "launch-code-ZULU"}},
		{"update_id": 7002, "message": map[string]any{"message_id": 1, "chat": map[string]any{"id": 98765.4321}}},
	} {
		status, err := e.fake.Deliver(u)
		if err != nil {
			t.Fatal(err)
		}
		if status != 200 {
			t.Errorf("update %d: the webhook answered %d; want 200, so that Telegram does not redeliver it", i+1, status)
		}
		id := strconv.Itoa(u["update_id"].(int))
		lines := logs.Lines(`"update":` + id)
		if len(lines) != 1 || !strings.Contains(lines[0], "could not be read") {
			t.Errorf("update %d: log lines naming it: %q; want one saying it could not be read", i+1, lines)
		}
	}
	// One too long to read: answered 200 too, as the same again would
	// be as long.
	long := map[string]any{"update_id": 7003, "message": map[string]any{"message_id": 1, "text": strings.Repeat("ZULU ", maxUpdateBytes/4)}}
	if status, err := e.fake.Deliver(long); err != nil || status != 200 {
		t.Errorf("an update too long to read: the webhook answered %d, %v; want 200", status, err)
	}
	if lines := logs.Lines("longer than"); len(lines) != 1 || !strings.Contains(lines[0], "could not be read") {
		t.Errorf("log lines about the update too long to read: %q", lines)
	}
	for _, secret := range []string{"ZULU", "98765", "4321"} {
		if strings.Contains(logs.String(), secret) {
			t.Errorf("the log shows the update's content %q:\n%s", secret, logs)
		}
	}
}
