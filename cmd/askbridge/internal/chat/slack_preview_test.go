package chat

import (
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	goslack "github.com/slack-go/slack"

	"github.com/askbridge/askbridge/adapters/slack/slackfake"
	"github.com/askbridge/askbridge/adapters/slack/slackpreview"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
	"github.com/askbridge/askbridge/core/card"
)

// slackShot is the README's picture of the card askbridge posts on Slack
// for Claude Code's Bash prompt.
const slackShot = "../../../../adapters/slack/testdata/screenshots/bash-prompt-card.png"

// TestSlackBashPromptCard makes the README's picture of a Slack card: the
// real program with Slack (the local fake) parks the real `askbridge hook
// --host claude-code` fed the pinned Bash PermissionRequest fixture as the
// host sends it, and the blocks it posted with chat.postMessage are drawn
// by slackpreview (a preview of Slack's rendering, not Slack) in headless
// chromium and captured. With -update the picture is written; without, the
// blocks and the drawn page are checked, and the picture must be there.
func TestSlackBashPromptCard(t *testing.T) {
	b := apptest.StartBridge(t)
	raw, err := os.ReadFile(filepath.Join(apptest.HookTestdata, "claude-code/permission-request.bash.json"))
	if err != nil {
		t.Fatal(err)
	}
	// The fixture goes in untouched (startHook would make its session the
	// test's name, which the card shows as the run).
	hookAsSent(t, b.Main, raw)

	var posted slackfake.Message
	if !b.Slack.Fake.WaitFor(apptest.SlackWait, func() bool {
		for _, m := range b.Slack.Fake.Messages() {
			if _, ok := apptest.SlackCardOf(m); ok {
				posted = m
				return true
			}
		}
		return false
	}) {
		t.Fatal("no card was posted for the prompt")
	}
	if posted.Channel != apptest.SlackRoom || posted.Edits != 0 {
		t.Fatalf("the card was posted in %s (want %s) and edited %d times: not the card as first posted", posted.Channel, apptest.SlackRoom, posted.Edits)
	}
	checkBashCardBlocks(t, posted.Blocks)

	sec, err := strconv.ParseFloat(posted.TS, 64)
	if err != nil {
		t.Fatalf("ts %q: %v", posted.TS, err)
	}
	page, err := slackpreview.Page(slackpreview.Message{Bot: "askbridge", At: time.Unix(int64(sec), 0), Blocks: posted.Blocks})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(page))
	}))
	t.Cleanup(srv.Close)

	tab := apptest.NewChrome(t).Tab(t, 720, 800, false)
	apptest.GoTo(t, tab, srv.URL)
	apptest.Until(t, tab, `document.fonts.status === "loaded"`)
	drawn := apptest.Eval[string](t, tab, `(function(){
		var out = [];
		out.push("sender=" + document.querySelector(".message .sender").textContent);
		out.push("text=" + document.querySelector(".message .blocks").innerText);
		document.querySelectorAll(".section b").forEach(function(e){ out.push("bold=" + e.textContent); });
		document.querySelectorAll(".pre").forEach(function(e){ out.push("pre=" + e.textContent); });
		document.querySelectorAll("button.button").forEach(function(e){
			out.push("button=" + e.textContent + "/" + e.dataset.style + "/" + getComputedStyle(e).backgroundColor);
		});
		return out.join("\n");
	})()`)
	for _, want := range []string{
		"bold=" + card.HardToReverseMarker,
		`"command": "rm -rf node_modules"`,
		"sender=askbridge",
		"button=" + card.LabelApprove + "/primary/rgb(0, 122, 90)",
		"button=" + card.LabelDeny + "/danger/rgb(224, 30, 90)",
	} {
		if !strings.Contains(drawn, want) {
			t.Errorf("the drawn card has no %q:\n%s", want, drawn)
		}
	}
	if t.Failed() {
		return
	}
	keepShot(t, tab, slackShot, "TestSlackBashPromptCard")
}

// keepShot captures the page's .message as the README's picture at path:
// written with -update, otherwise checked where it is kept (test names
// the test that redraws it).
func keepShot(t *testing.T, tab context.Context, path, test string) {
	t.Helper()
	buf, err := chromedp.Run(tab, chromedp.Screenshot(chromedp.CSS(".message")))
	if err != nil {
		t.Fatal(err)
	}
	if *apptest.UpdateShots {
		checkShot(t, "the capture", buf)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, buf, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	kept, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v: run go test ./cmd/askbridge -run %s -update", err, test)
	}
	checkShot(t, path, kept)
}

// checkBashCardBlocks checks the blocks as posted: the command in a
// section, the hard-to-reverse marker in the card's head, and an Approve
// (primary) and a Deny (danger) button.
func checkBashCardBlocks(t *testing.T, raw json.RawMessage) {
	t.Helper()
	var blocks goslack.Blocks
	if err := json.Unmarshal(raw, &blocks); err != nil {
		t.Fatalf("blocks: %v\n%s", err, raw)
	}
	var texts []string
	buttons := map[string]goslack.Style{}
	for _, blk := range blocks.BlockSet {
		switch v := blk.(type) {
		case *goslack.SectionBlock:
			if v.Text != nil {
				texts = append(texts, v.Text.Text)
			}
		case *goslack.ActionBlock:
			for _, e := range v.Elements.ElementSet {
				if btn, ok := e.(*goslack.ButtonBlockElement); ok {
					buttons[btn.Text.Text] = btn.Style
				}
			}
		}
	}
	all := strings.Join(texts, "\n")
	if len(texts) == 0 || !strings.Contains(texts[0], card.HardToReverseMarker) {
		t.Errorf("the card's head does not carry %q: %q", card.HardToReverseMarker, texts)
	}
	if !strings.Contains(all, "rm -rf node_modules") {
		t.Errorf("no section shows the command:\n%s", all)
	}
	if s, ok := buttons[card.LabelApprove]; !ok || s != goslack.StylePrimary {
		t.Errorf("approve button %q (%v) in %v", card.LabelApprove, ok, buttons)
	}
	if s, ok := buttons[card.LabelDeny]; !ok || s != goslack.StyleDanger {
		t.Errorf("deny button %q (%v) in %v", card.LabelDeny, ok, buttons)
	}
}

// checkShot checks that buf is a PNG of the page's width, cropped to the
// message (so shorter than the window it was drawn in).
func checkShot(t *testing.T, name string, buf []byte) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(buf))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if w, h := img.Bounds().Dx(), img.Bounds().Dy(); w != 720 || h < 200 || h >= 800 {
		t.Fatalf("%s is %dx%d, want 720 wide and cropped to the message", name, w, h)
	}
}

// hookAsSent runs `askbridge hook --host claude-code` as a host does, with
// raw on stdin exactly as given; the process is killed when the test ends.
func hookAsSent(t *testing.T, m *app.Main, raw []byte) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "hook", "--host", "claude-code")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ASKBRIDGE_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, apptest.AsProgram+"=1", "ASKBRIDGE_URL="+m.URL, "ASKBRIDGE_TOKEN="+apptest.AgentA)
	cmd.Stdin = bytes.NewReader(raw)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() && stderr.Len() > 0 {
			t.Logf("askbridge hook said: %s", stderr.String())
		}
	})
}
