package teamsfake

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"
)

func fixture(t *testing.T, name string) any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return v
}

// sameShape reports where got lacks a key of want or holds another JSON
// type: the fake must serve every documented field, typed as documented.
// skip names keys (by path) the fake leaves out, each for a reason given
// where it is called.
func sameShape(want, got any, path string, skip map[string]bool) []string {
	if skip[path] {
		return nil
	}
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: %T, want an object", path, got)}
		}
		var out []string
		for k, wv := range w {
			gv, ok := g[k]
			if !ok {
				if !skip[path+"."+k] {
					out = append(out, path+"."+k+": missing")
				}
				continue
			}
			out = append(out, sameShape(wv, gv, path+"."+k, skip)...)
		}
		return out
	case []any:
		g, ok := got.([]any)
		if !ok || len(w) > 0 && len(g) == 0 {
			return []string{fmt.Sprintf("%s: %v, want a non-empty array", path, got)}
		}
		if len(w) > 0 {
			return sameShape(w[0], g[0], path+"[0]", skip)
		}
		return nil
	default:
		if fmt.Sprintf("%T", want) != fmt.Sprintf("%T", got) {
			return []string{fmt.Sprintf("%s: %T, want %T", path, got, want)}
		}
	}
	return nil
}

func check(t *testing.T, name string, got any, skip map[string]bool) {
	t.Helper()
	raw, _ := json.Marshal(got)
	var g any
	_ = json.Unmarshal(raw, &g)
	if diffs := sameShape(fixture(t, name), g, "$", skip); len(diffs) > 0 {
		t.Errorf("%s: the fake differs from the documented shape:\n%s", name, strings.Join(diffs, "\n"))
	}
}

func getJSON(t *testing.T, u string) any {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v any
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func call(t *testing.T, method, u, token string, body any) (int, any) {
	t.Helper()
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest(method, u, bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var v any
	_ = json.Unmarshal(b, &v)
	return resp.StatusCode, v
}

// TestFakeMatchesTheDocumentedShapes checks what the fake serves and
// sends against the payloads pinned from Microsoft's documentation.
func TestFakeMatchesTheDocumentedShapes(t *testing.T) {
	s := Start(t, "app-id", "app-secret")
	meta := getJSON(t, s.OpenIDURL())
	check(t, "openid-configuration.json", meta, nil)
	jwks := meta.(map[string]any)["jwks_uri"].(string)
	// x5c is the key's certificate chain; a bot checks tokens with n and
	// e, so the fake publishes the key alone.
	check(t, "keys.json", getJSON(t, jwks), map[string]bool{"$.keys[0].x5c": true})

	// The token endpoint: the client-credentials grant, and a refusal.
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {"app-id"}, "client_secret": {"app-secret"}, "scope": {Scope}}
	resp, err := http.PostForm(s.TokenURL(), form)
	if err != nil {
		t.Fatal(err)
	}
	var tok map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&tok)
	resp.Body.Close()
	check(t, "token-response.json", tok, nil)
	form.Set("client_secret", "wrong")
	if resp, err := http.PostForm(s.TokenURL(), form); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a wrong secret got a token: %v %v", resp, err)
	}
	access := tok["access_token"].(string)

	// A token the fake signs carries the documented claims.
	var claims jwt.MapClaims
	if _, _, err := jwt.NewParser().ParseUnverified(s.Sign(Token{}), &claims); err != nil {
		t.Fatal(err)
	}
	check(t, "token-claims.json", claims, nil)

	// The Bot Connector: a new thread in a channel, a post, an update.
	status, conv := call(t, http.MethodPost, s.URL()+"v3/conversations", access, fixture(t, "create-conversation-channel.json"))
	if status != http.StatusCreated {
		t.Fatalf("create: %d %v", status, conv)
	}
	check(t, "conversation-resource-response.json", conv, nil)
	id := conv.(map[string]any)["id"].(string)
	root := conv.(map[string]any)["activityId"].(string)
	if id != "19:ops0000000000000000000000000000@thread.tacv2;messageid="+root {
		t.Fatalf("thread id %q", id)
	}
	status, res := call(t, http.MethodPost, s.URL()+"v3/conversations/"+url.PathEscape(id)+"/activities", access, map[string]any{"type": "message", "text": "hi"})
	if status != http.StatusCreated {
		t.Fatalf("send: %d %v", status, res)
	}
	check(t, "resource-response.json", res, nil)
	status, res = call(t, http.MethodPut, s.URL()+"v3/conversations/"+url.PathEscape(id)+"/activities/"+root, access, map[string]any{"type": "message", "text": "edited"})
	if status != http.StatusOK {
		t.Fatalf("update: %d %v", status, res)
	}
	check(t, "resource-response.json", res, nil)
	if ms := s.Messages(); ms[0].Text != "edited" || ms[0].Updates != 1 {
		t.Fatalf("the update did not replace the root: %+v", ms[0])
	}

	// Without the app token, or when throttled: the documented errors.
	if status, res := call(t, http.MethodPost, s.URL()+"v3/conversations/"+url.PathEscape(id)+"/activities", "", map[string]any{"type": "message"}); status != http.StatusUnauthorized {
		t.Fatalf("no token: %d %v", status, res)
	}
	s.FailNext(http.StatusTooManyRequests)
	status, res = call(t, http.MethodPost, s.URL()+"v3/conversations/"+url.PathEscape(id)+"/activities", access, map[string]any{"type": "message"})
	if status != http.StatusTooManyRequests {
		t.Fatalf("throttled: %d", status)
	}
	check(t, "error-response.json", res, nil)

	// What Teams sends the bot for a click on Action.Execute.
	m := s.Messages()[0]
	act := s.ExecuteActivity(User{ID: "29:1alice", AAD: "aaaaaaaa-1111-4111-8111-aaaaaaaaaaaa", Name: "Alice Ops"}, m, "askbridge",
		map[string]any{"askbridgeRef": "1a-0b234567abcdefghij"})
	check(t, "invoke-adaptivecard-action.json", act, nil)

	// The documented invoke response reads as the note it carries.
	b, _ := os.ReadFile(filepath.Join("testdata", "invoke-response.json"))
	if note, err := InvokeNote(b); err != nil || note != "Recorded: Approved" {
		t.Fatalf("invoke response: %q %v", note, err)
	}
}

// TestShapeCheckFails: the comparison is not a formality.
func TestShapeCheckFails(t *testing.T) {
	want := fixture(t, "token-response.json")
	if d := sameShape(want, map[string]any{"token_type": "Bearer", "expires_in": "3599"}, "$", nil); len(d) < 2 {
		t.Fatalf("a missing and a mistyped field were not both found: %v", d)
	}
}

// TestFileAttachmentShape: the file attachment the fake's replies carry
// has the documented keys, typed as documented.
func TestFileAttachmentShape(t *testing.T) {
	check(t, "file-attachment.json", FileAttachment("deploy.log"), nil)
}

// TestRevisionShapes: an edit's and a deletion's activities, as the fake
// sends them, have the documented keys, typed as documented. The client
// information (the entities, locale and local times) the fake leaves out:
// the adapter reads none of it.
func TestRevisionShapes(t *testing.T) {
	s := Start(t, "00000000-0000-0000-0000-0000000000b0", "app-secret")
	alice := User{ID: "29:1alice", AAD: "aaaaaaaa-1111-4111-8111-aaaaaaaaaaaa", Name: "Alice Ops"}
	client := map[string]bool{"$.entities": true, "$.locale": true, "$.localTimestamp": true, "$.localTimezone": true}
	check(t, "message-edit.json", s.EditActivity(alice, PersonalChat(alice.ID), "1700000000005", "us-east-1"), client)
	check(t, "message-soft-delete.json", s.SoftDeleteActivity(alice, PersonalChat(alice.ID), "1700000000005"), client)
}
