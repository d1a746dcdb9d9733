package app

import (
	"crypto/ed25519"
	"encoding/hex"
	"fmt"
	"net/mail"
	"net/url"
	"reflect"
	"strconv"
	"strings"

	"github.com/caarlos0/env/v11"

	"github.com/askbridge/askbridge/adapters/email"
	"github.com/askbridge/askbridge/adapters/telegram"
	"github.com/askbridge/askbridge/core"
	redisstore "github.com/askbridge/askbridge/store/redis"
)

// Settings is everything askbridge reads at start: the environment
// variables named in the tags below, each with its default there and
// nowhere else, and the YAML file ASKBRIDGE_CONFIG names. LoadSettings
// reads and checks it once; the rest of the program takes it as checked.
type Settings struct {
	Addr       string `env:"ASKBRIDGE_ADDR" envDefault:"127.0.0.1:8080"`
	DataDir    string `env:"ASKBRIDGE_DATA_DIR" envDefault:"askbridge-data"`
	ConfigPath string `env:"ASKBRIDGE_CONFIG"`
	// At most one of the three Redis URLs is set; none runs the embedded
	// store. Each is go-redis's own URL form (see redis.go); they may
	// carry passwords.
	RedisURL         Secret `env:"REDIS_URL"`          // one server
	RedisSentinelURL Secret `env:"REDIS_SENTINEL_URL"` // Sentinels and master_name
	RedisClusterURL  Secret `env:"REDIS_CLUSTER_URL"`  // a cluster's seed nodes
	// RedisCAFile is a PEM file of the CA certificates a rediss:// server's
	// certificate must chain to, for a private CA; "" trusts the system's.
	RedisCAFile string `env:"REDIS_TLS_CA_FILE"`
	// RedisDurability is how many replicas must hold each transition
	// before its caller is told it succeeded (WAIT or WAITAOF; 0 is off),
	// and RedisDurabilityTimeout how long to wait for them.
	RedisDurability        string                `env:"ASKBRIDGE_REDIS_DURABILITY" envDefault:"0"`
	RedisDurabilityTimeout string                `env:"ASKBRIDGE_REDIS_DURABILITY_TIMEOUT" envDefault:"1s"`
	durability             redisstore.Durability // set by the check, from the two above
	ActorKey               Secret                `env:"ASKBRIDGE_ACTOR_KEY"`
	AuditKey               Secret                `env:"ASKBRIDGE_AUDIT_KEY"` // chains the event log (audit.go)
	LogLevel               string                `env:"ASKBRIDGE_LOG_LEVEL"`
	LogFormat              string                `env:"ASKBRIDGE_LOG_FORMAT" envDefault:"auto"` // auto, console or json
	// ReplicaID names this replica for the leases of single connections
	// (Telegram polling, the Discord gateway); "" makes one from the host
	// name and an id kept in the data directory, so a restarted replica
	// takes its own lease straight back.
	ReplicaID string `env:"ASKBRIDGE_REPLICA_ID"`
	// MetricsAddr, when set, serves /metrics with no token on a listener
	// of its own (see metrics.go).
	MetricsAddr string `env:"ASKBRIDGE_METRICS_ADDR"`

	Slack    SlackSettings
	Discord  DiscordSettings
	Telegram TelegramSettings
	Client   ClientSettings
	Console  ConsoleSettings
	API      APISettings // the HTTP API's limits (api_settings.go)

	File File `env:"-"`
	// fileDigest is the SHA-256 (hex) of the file as LoadSettings read
	// it, for GET /v1/config/digest and the reloads (reload.go).
	fileDigest string
	// Clock is the program's clock, set by Run for the openers (links
	// expire by it); nil is the wall clock.
	Clock core.Clock `env:"-"`

	// The one-way doors, and where people's browsers and phones reach
	// this server: their links (email, ntfy) point below PublicURL.
	Email     EmailSettings
	Ntfy      NtfySettings
	PublicURL string `env:"ASKBRIDGE_PUBLIC_URL"`

	// Microsoft Teams, a bot on the Bot Framework.
	Teams TeamsSettings
}

// SlackSettings turn the Slack adapter on when BotToken is set. Clicks and
// replies come over Socket Mode (AppToken), over HTTP (SigningSecret, at
// /slack/events and /slack/interactivity), or both; one is required.
type SlackSettings struct {
	BotToken      Secret `env:"SLACK_BOT_TOKEN"`
	AppToken      Secret `env:"SLACK_APP_TOKEN"`
	SigningSecret Secret `env:"SLACK_SIGNING_SECRET"`
	// APIURL points the SDK at another Web API base; checked, it ends in
	// "/", as the SDK appends method names to it.
	APIURL string `env:"SLACK_API_URL"`
}

// DiscordSettings turn the Discord adapter on when BotToken is set.
type DiscordSettings struct {
	BotToken Secret `env:"DISCORD_BOT_TOKEN"`
	// AppID, when set, refuses interactions for another application.
	AppID string `env:"DISCORD_APP_ID"`
	// PublicKey (hex Ed25519) mounts POST /discord/interactions.
	PublicKey string `env:"DISCORD_PUBLIC_KEY"`
	// APIURL is the REST base; the adapter defaults to Discord's own.
	APIURL string `env:"DISCORD_API_URL"`
	// Gateway is on or off: off takes clicks only over HTTP.
	Gateway string `env:"DISCORD_GATEWAY" envDefault:"on"`

	// Set by the check, from the strings above.
	gatewayOn bool
	publicKey ed25519.PublicKey
}

// TelegramSettings turn the Telegram adapter on when BotToken is set.
// WebhookSecret selects webhook mode (with WebhookURL, the public URL
// Telegram POSTs to); without it the adapter long-polls, one replica at a
// time. APIURL points it at another Bot API server, in tgbotapi's endpoint
// format ("…/bot%s/%s").
type TelegramSettings struct {
	BotToken      Secret `env:"TELEGRAM_BOT_TOKEN"`
	APIURL        string `env:"TELEGRAM_API_URL"`
	WebhookSecret Secret `env:"TELEGRAM_WEBHOOK_SECRET"`
	WebhookURL    string `env:"TELEGRAM_WEBHOOK_URL"`
}

// EmailSettings turn the email door on when Host is set: questions are
// mailed through this SMTP server, with links below PublicURL.
type EmailSettings struct {
	Host string `env:"EMAIL_SMTP_HOST"`
	// Port defaults to 587, or 465 with TLS "tls". It is read as text and
	// checked (into port), so a bad value is refused naming the variable,
	// and does not stop a client command, which reads no server setting.
	Port string `env:"EMAIL_SMTP_PORT"`
	port int
	// TLS is starttls (required STARTTLS), tls (TLS from the first byte)
	// or none (a relay on the same host or a private network only). Unset,
	// check makes it tls on port 465 and starttls on any other.
	TLS      string `env:"EMAIL_SMTP_TLS"`
	Username string `env:"EMAIL_SMTP_USERNAME"`
	Password Secret `env:"EMAIL_SMTP_PASSWORD"`
	// From is the sender: an address, or "Name <address>".
	From string `env:"EMAIL_FROM"`
	// HELO is the name the EHLO gives this machine; unset, its host name
	// when fully qualified, else the connection's own address.
	HELO string `env:"EMAIL_SMTP_HELO"`
}

// NtfySettings turn the ntfy door on when URL (the ntfy server's base
// URL) is set; Token, when set, is its access token. TokenOverHTTP, when
// true, lets the token (or a password in URL) go over plain http to
// another machine, for a self-hosted server reached by name on a network
// trusted to carry it (a compose network, a cluster service); without it
// that is refused, as every other platform's endpoint is. It is read as
// text and checked (into tokenOverHTTP), as EMAIL_SMTP_PORT is, so a bad
// value is refused naming the variable, and does not stop a client
// command, which reads no server setting.
type NtfySettings struct {
	URL           string `env:"NTFY_URL"`
	Token         Secret `env:"NTFY_TOKEN"`
	TokenOverHTTP string `env:"NTFY_TOKEN_OVER_HTTP" envDefault:"false"`
	tokenOverHTTP bool
}

// ClientSettings are what the CLI commands reach a server with. With no
// URL they reach the local server (Addr) with the admin token kept in the
// local data directory.
type ClientSettings struct {
	URL   string `env:"ASKBRIDGE_URL"`
	Token Secret `env:"ASKBRIDGE_TOKEN"`
	RunID string `env:"ASKBRIDGE_RUN_ID"`
}

// readEnv fills Settings from the variables its tags name, unchecked: the
// CLI reads its few settings this way, so a server's broken platform
// setting does not stop a client. Every value is trimmed, so a token
// pasted with a trailing newline works the same on every platform; an
// empty value counts as unset.
func readEnv(getenv func(string) string) (Settings, error) {
	var s Settings
	names, err := settingNames()
	if err != nil {
		return s, err
	}
	vars := map[string]string{}
	for _, name := range names {
		if v := strings.TrimSpace(getenv(name)); v != "" {
			vars[name] = v
		}
	}
	err = env.ParseWithOptions(&s, env.Options{Environment: vars})
	return s, err
}

// check is the one validation of the environment.
func (s *Settings) check() error {
	switch s.LogFormat {
	case "auto", "console", "json":
	default:
		return fmt.Errorf("ASKBRIDGE_LOG_FORMAT: %q is not auto, console or json", s.LogFormat)
	}
	if _, err := parseLogLevel(s.LogLevel); err != nil {
		return err
	}
	if _, _, err := s.redisDial(); err != nil {
		return err
	}
	for _, p := range []struct {
		settings any
		on       string
	}{{s.Slack, "SLACK_BOT_TOKEN"}, {s.Discord, "DISCORD_BOT_TOKEN"}, {s.Telegram, "TELEGRAM_BOT_TOKEN"}, {s.Email, "EMAIL_SMTP_HOST"}, {s.Ntfy, "NTFY_URL"}} {
		if err := turnedOn(p.settings, p.on); err != nil {
			return err
		}
	}
	for _, c := range []func() error{s.Slack.check, s.Discord.check, s.Telegram.check, s.Teams.check, s.Console.check, s.API.check, s.Email.check, s.Ntfy.check} {
		if err := c(); err != nil {
			return err
		}
	}
	if (s.Email.Host != "" || s.Ntfy.URL != "") && !httpURL(s.PublicURL) {
		return fmt.Errorf("ASKBRIDGE_PUBLIC_URL: the email and ntfy doors need the public http(s) URL people reach this server at, for their links")
	}
	return nil
}

// turnedOn refuses a platform's settings given without the one that
// turns the platform on (on, an env name of settings, a struct of them):
// a misspelt SLACK_BOT_TOKEN beside a set SLACK_SIGNING_SECRET would
// otherwise start the server without Slack, and its cards would wait in
// the outbox for ever. A setting at its default counts as not given.
func turnedOn(settings any, on string) error {
	v := reflect.ValueOf(settings)
	var given []string
	onSet := false
	for i := range v.NumField() {
		f, val := v.Type().Field(i), v.Field(i)
		switch name := f.Tag.Get("env"); {
		case name == on:
			onSet = !val.IsZero()
		case name == "" || name == "-" || val.IsZero() || fmt.Sprint(val.Interface()) == f.Tag.Get("envDefault"):
		default:
			given = append(given, name)
		}
	}
	if onSet || len(given) == 0 {
		return nil
	}
	return fmt.Errorf("%s: set, but %s is not, so this platform would not run: set %s, or unset %s",
		strings.Join(given, ", "), on, on, strings.Join(given, ", "))
}

func (s *EmailSettings) check() error {
	if s.Host == "" {
		return nil
	}
	if _, err := mail.ParseAddress(s.From); err != nil {
		return fmt.Errorf("EMAIL_FROM: %q is not an address (askbridge@example.com, or \"askbridge <askbridge@example.com>\")", s.From)
	}
	if err := email.CheckFrom(s.From); err != nil { // a domain with no ASCII form for the Message-IDs
		return fmt.Errorf("EMAIL_FROM: %w", err)
	}
	switch s.TLS {
	case "", email.TLSStartTLS, email.TLSImplicit, email.TLSNone:
	default:
		return fmt.Errorf("EMAIL_SMTP_TLS: %q is not starttls, tls or none", s.TLS)
	}
	if s.Port != "" {
		p, err := strconv.Atoi(s.Port)
		if err != nil || p < 0 || p > 65535 {
			return fmt.Errorf("EMAIL_SMTP_PORT: %q is not a port", s.Port)
		}
		s.port = p
	}
	mode, err := email.TLSMode(s.port, s.TLS)
	if err != nil {
		return fmt.Errorf("EMAIL_SMTP_PORT: 465 speaks TLS from the first byte, which EMAIL_SMTP_TLS=%s does not: set EMAIL_SMTP_TLS=tls (or leave it unset), or use port 587 for STARTTLS", s.TLS)
	}
	s.TLS = mode
	if err := email.CheckHELO(s.HELO); err != nil {
		return fmt.Errorf("EMAIL_SMTP_HELO: %w", err)
	}
	if s.Password != "" && s.Username == "" {
		return fmt.Errorf("EMAIL_SMTP_PASSWORD: set without EMAIL_SMTP_USERNAME")
	}
	return nil
}

// TeamsSettings turn the Teams adapter on when AppID (the bot's app
// registration) is set; Microsoft's Bot Connector then POSTs activities
// to /teams/messages. The URLs point it at other endpoints than
// Microsoft's public ones (a single-tenant app's token endpoint, a
// regional service URL, or a local fake).
type TeamsSettings struct {
	AppID       string `env:"TEAMS_APP_ID"`
	AppPassword Secret `env:"TEAMS_APP_PASSWORD"`
	TenantID    string `env:"TEAMS_TENANT_ID"`
	ServiceURL  string `env:"TEAMS_SERVICE_URL"`
	TokenURL    string `env:"TEAMS_TOKEN_URL"`
	OpenIDURL   string `env:"TEAMS_OPENID_URL"`
}

func (s *TeamsSettings) check() error {
	if s.AppID == "" {
		if s.AppPassword != "" || s.TenantID != "" {
			return fmt.Errorf("TEAMS_APP_ID: required with TEAMS_APP_PASSWORD and TEAMS_TENANT_ID")
		}
		return nil
	}
	if s.AppPassword == "" {
		return fmt.Errorf("TEAMS_APP_PASSWORD: required with TEAMS_APP_ID (the app registration's client secret)")
	}
	if s.TenantID == "" {
		return fmt.Errorf("TEAMS_TENANT_ID: required with TEAMS_APP_ID (the Microsoft Entra tenant the bot posts in)")
	}
	// In a fixed order, so that several bad URLs are refused for the same
	// one on every start.
	for _, v := range []struct{ name, url string }{
		{"TEAMS_SERVICE_URL", s.ServiceURL}, {"TEAMS_TOKEN_URL", s.TokenURL}, {"TEAMS_OPENID_URL", s.OpenIDURL},
	} {
		if v.url == "" {
			continue
		}
		if why := secretURL(v.url); why != "" {
			return fmt.Errorf("%s: %q %s", v.name, v.url, why)
		}
	}
	return nil
}

func (s *NtfySettings) check() error {
	if s.URL == "" {
		return nil
	}
	if !httpURL(s.URL) {
		return fmt.Errorf("NTFY_URL: %q is not an http(s) URL (the ntfy server, such as https://ntfy.sh)", redactedURL(s.URL))
	}
	over, err := strconv.ParseBool(s.TokenOverHTTP)
	if err != nil {
		return fmt.Errorf("NTFY_TOKEN_OVER_HTTP: %q is not true or false", s.TokenOverHTTP)
	}
	s.tokenOverHTTP = over
	u, _ := url.Parse(s.URL)
	if (s.Token != "" || u.User != nil) && !over && secretURL(s.URL) != "" {
		return fmt.Errorf("NTFY_URL: %q is http to another machine, which would carry NTFY_TOKEN (or the URL's password) in the clear: "+
			"use https, or set NTFY_TOKEN_OVER_HTTP=true where the network is trusted to carry it", redactedURL(s.URL))
	}
	return nil
}

func (s *SlackSettings) check() error {
	if s.BotToken == "" {
		return nil
	}
	if s.AppToken == "" && s.SigningSecret == "" {
		return fmt.Errorf("SLACK_APP_TOKEN or SLACK_SIGNING_SECRET: one is required with SLACK_BOT_TOKEN " +
			"(an app-level token for Socket Mode, or the signing secret for the HTTP endpoints)")
	}
	if s.AppToken != "" && !strings.HasPrefix(s.AppToken.Reveal(), "xapp-") {
		return fmt.Errorf("SLACK_APP_TOKEN: an app-level token starts with xapp-")
	}
	if s.APIURL != "" {
		if why := secretURL(s.APIURL); why != "" {
			return fmt.Errorf("SLACK_API_URL: %q %s", s.APIURL, why)
		}
		if !strings.HasSuffix(s.APIURL, "/") {
			s.APIURL += "/"
		}
	}
	return nil
}

func (s *DiscordSettings) check() error {
	if s.BotToken == "" {
		return nil
	}
	if s.AppID != "" && strings.Trim(s.AppID, "0123456789") != "" {
		return fmt.Errorf("DISCORD_APP_ID: %q is not a Discord id (a number)", s.AppID)
	}
	if s.APIURL != "" {
		if why := secretURL(s.APIURL); why != "" {
			return fmt.Errorf("DISCORD_API_URL: %q %s", s.APIURL, why)
		}
	}
	if s.PublicKey != "" {
		key, err := hex.DecodeString(s.PublicKey)
		if err != nil || len(key) != ed25519.PublicKeySize {
			return fmt.Errorf("DISCORD_PUBLIC_KEY: not a hex Ed25519 public key (%d hex characters, from the app's General Information page)", 2*ed25519.PublicKeySize)
		}
		s.publicKey = key
	}
	switch g := strings.ToLower(s.Gateway); g {
	case "on", "true", "1", "yes":
		s.gatewayOn = true
	case "off", "false", "0", "no":
		if s.publicKey == nil {
			return fmt.Errorf("DISCORD_GATEWAY: off leaves no way to receive clicks unless DISCORD_PUBLIC_KEY is set for the HTTP endpoint")
		}
	default:
		return fmt.Errorf("DISCORD_GATEWAY: %q is not on or off", g)
	}
	return nil
}

func (s *TelegramSettings) check() error {
	if s.BotToken == "" {
		return nil
	}
	if !strings.Contains(s.BotToken.Reveal(), ":") {
		return fmt.Errorf("TELEGRAM_BOT_TOKEN: not a bot token (<bot id>:<secret>, from @BotFather)")
	}
	if e := s.APIURL; e != "" {
		if strings.Count(e, "%s") != 2 {
			return fmt.Errorf("TELEGRAM_API_URL: must hold two %%s, for the token and the method (https://api.telegram.org/bot%%s/%%s)")
		}
		// The token goes in the path: the URL is checked as it is sent.
		if why := secretURL(strings.ReplaceAll(e, "%s", "x")); why != "" {
			return fmt.Errorf("TELEGRAM_API_URL: %q %s", e, why)
		}
	}
	if s.WebhookSecret == "" {
		return nil
	}
	if !httpURL(s.WebhookURL) {
		return fmt.Errorf("TELEGRAM_WEBHOOK_URL: webhook mode (TELEGRAM_WEBHOOK_SECRET is set) needs the public URL of %s", telegram.WebhookPath)
	}
	if sec := s.WebhookSecret.Reveal(); len(sec) > 256 || strings.Trim(sec, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-") != "" {
		return fmt.Errorf("TELEGRAM_WEBHOOK_SECRET: 1-256 characters of A-Z, a-z, 0-9, _ and -")
	}
	return nil
}

// httpURL reports whether v is an absolute http or https URL with a host:
// the one check every URL setting gets.
func httpURL(v string) bool {
	u, err := url.Parse(v)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// secretURL checks a platform endpoint that is sent a secret (a bot
// token, an app's client secret) or trusted for one (the keys that sign
// a platform's requests): an absolute https URL, or http to this machine
// only (a local fake or proxy), so a typo or an override never sends the
// token in the clear over a network, nor takes signing keys from one. It
// says what is wrong, "" when nothing is.
func secretURL(v string) string {
	u, err := url.Parse(v)
	switch {
	case err != nil || u.Host == "" || u.Scheme != "http" && u.Scheme != "https":
		return "is not an http(s) URL"
	case u.Scheme == "http" && !loopbackHost(u.Hostname()):
		return "is http to another machine: use https (http is taken only for a loopback address, such as a local fake)"
	}
	return ""
}

// redactedURL is v for an error message, its password (if any) hidden.
func redactedURL(v string) string {
	u, err := url.Parse(v)
	if err != nil {
		return "(not a URL)"
	}
	return u.Redacted()
}
