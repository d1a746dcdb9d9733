package app

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/askbridge/askbridge/adapters/httpapi"
	"github.com/askbridge/askbridge/adapters/webhook"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/loops"
)

// WebhooksFile is the webhooks section: where questions' callbacks may
// go, the secret that signs them when neither the route nor the token has
// its own, and how long a webhook is retried before it is given up.
type WebhooksFile struct {
	Allow       []string `yaml:"allow"`
	Secret      Secret   `yaml:"secret"`
	SecretEnv   string   `yaml:"secret_env"`
	GiveUpAfter Duration `yaml:"give_up_after"`
}

// DefaultGiveUpAfter is webhooks.give_up_after's default.
const DefaultGiveUpAfter = 24 * time.Hour

// checkWebhooks checks the webhooks section and the routes' and tokens'
// webhook keys, naming the key at fault, and reads the secrets given by
// environment variable into f.
func checkWebhooks(f *File, getenv func(string) string) error {
	w := &f.Webhooks
	if err := core.CallbackPrefixes(w.Allow).Validate(); err != nil {
		return fmt.Errorf("%s", core.ErrorMessage(err))
	}
	var err error
	if w.Secret, err = webhookSecret("webhooks.secret", w.Secret, w.SecretEnv, getenv); err != nil {
		return err
	}
	if len(w.Allow) > 0 && w.Secret == "" {
		return fmt.Errorf("webhooks: secret or secret_env is required with allow (it signs every webhook without a secret of its own)")
	}
	if w.GiveUpAfter != 0 && time.Duration(w.GiveUpAfter) < time.Minute {
		return fmt.Errorf("webhooks.give_up_after: must be at least 1m")
	}
	for _, name := range slices.Sorted(maps.Keys(f.Routes)) {
		r := f.Routes[name]
		key := "routes." + name
		if r.CallbackURL != "" {
			if err := core.CallbackPrefixes(w.Allow).Check(key+".callback_url", r.CallbackURL); err != nil {
				return fmt.Errorf("%s", core.ErrorMessage(err))
			}
		}
		if r.WebhookSecret, err = webhookSecret(key+".webhook_secret", r.WebhookSecret, r.WebhookSecretEnv, getenv); err != nil {
			return err
		}
		if r.WebhookSecret != "" && r.CallbackURL == "" {
			return fmt.Errorf("%s.webhook_secret: set without callback_url (it signs the route's own callback)", key)
		}
		f.Routes[name] = r
	}
	for i := range f.Tokens {
		t := &f.Tokens[i]
		if t.WebhookSecret, err = webhookSecret(fmt.Sprintf("tokens[%d].webhook_secret", i), t.WebhookSecret, t.WebhookSecretEnv, getenv); err != nil {
			return err
		}
	}
	return nil
}

// webhookSecret is a secret given inline or by environment variable.
func webhookSecret(key string, inline Secret, env string, getenv func(string) string) (Secret, error) {
	s := inline
	switch {
	case inline != "" && env != "":
		return "", fmt.Errorf("%s: give %s or %s_env, not both", key, key, key)
	case env != "":
		var err error
		if s, err = secretFromEnv(key+"_env", env, getenv); err != nil {
			return "", err
		}
	}
	if s != "" && len(s) < webhook.MinSecretLen {
		return "", fmt.Errorf("%s: must be at least %d characters", key, webhook.MinSecretLen)
	}
	return s, nil
}

// openWebhooks is the sender of the close webhooks. It exists even when
// the file allows no callbacks (then it sends none), so that a reloaded
// file that allows some is put in force without a restart.
func openWebhooks(f File) (*webhook.Sender, error) {
	allow, keys := webhookSettings(f)
	return webhook.New(webhook.Options{Allow: allow, Body: httpapi.WaitBody, Keys: keys})
}

// webhookSettings are the allow list and the keys of f: the fallback
// secret, each route's, and each token's.
func webhookSettings(f File) (core.CallbackPrefixes, *webhook.Keys) {
	keys := &webhook.Keys{Default: []byte(f.Webhooks.Secret.Reveal()), Routes: map[string]webhook.RouteKey{}, Tokens: map[core.AgentID][]byte{}}
	for name, r := range f.Routes {
		keys.Routes[name] = webhook.RouteKey{URL: r.CallbackURL, Secret: []byte(r.WebhookSecret.Reveal())}
	}
	for _, t := range f.Tokens {
		if t.WebhookSecret != "" {
			keys.Tokens[core.AgentID(t.Name)] = []byte(t.WebhookSecret.Reveal())
		}
	}
	return f.Webhooks.Allow, keys
}

func (m *Main) deliverWebhooks(ctx context.Context, svc *core.Service, sender *webhook.Sender) error {
	f := m.Settings.File
	o := loops.DeliverOptions{Consumer: m.consumer, MinIdle: time.Duration(f.Policies.OutboxIdle),
		GiveUpAfter: cmp.Or(time.Duration(f.Webhooks.GiveUpAfter), DefaultGiveUpAfter), OnError: m.deliveryFailed(ctx, svc, "webhook failed", "webhook waits")}
	return loops.DeliverCalls(ctx, svc, sender, o)
}
