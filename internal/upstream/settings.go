package upstream

import (
	"net/http"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/config"
)

// Credential is the secret an application's settings carry.
type Credential int

const (
	// NoCredential: the application takes none, or the service reads its
	// own (a user name and password, say).
	NoCredential Credential = iota
	// APIKey is read from <APP>_API_KEY_FILE and sent in App.KeyHeader.
	APIKey
	// Token is read from <APP>_TOKEN_FILE and sent as a bearer token.
	Token
)

// DefaultAppTimeout is <APP>_TIMEOUT when the App sets no default.
const DefaultAppTimeout = 30 * time.Second

// App describes the settings of one upstream application. Every service
// reads them under the same names and with the same meaning:
//
//	<APP>_URL            the application's base URL (https://, or http://
//	                     with <APP>_ALLOW_HTTP=true); no user:password@,
//	                     query or fragment
//	<APP>_API_KEY_FILE   or <APP>_TOKEN_FILE: the file holding the credential
//	<APP>_CA_FILE        a PEM bundle added to the system roots
//	<APP>_ALLOW_HTTP     true permits plain http:// (the credential then
//	                     travels unencrypted)
//	<APP>_TIMEOUT        the deadline of one request, a duration ("30s")
type App struct {
	// Prefix starts every setting: "SONARR" reads SONARR_URL, ….
	Prefix string
	// Name is the application in messages ("Sonarr"); default Prefix.
	Name       string
	Credential Credential
	// KeyHeader carries an APIKey (default X-Api-Key).
	KeyHeader string
	// CredentialOptional lets the application run without its credential
	// (a service with other ways to log in).
	CredentialOptional bool
	// Optional lets the whole application be left unconfigured: with
	// neither <APP>_URL nor the credential file set, Load reports false
	// and records no error (arr runs with any of its three apps).
	Optional bool
	// DefaultTimeout is <APP>_TIMEOUT when unset (default 30s); a set
	// MaxTimeout bounds it.
	DefaultTimeout, MaxTimeout time.Duration
	// Aliases are older names still accepted, documented on the service's
	// page. Setting a name and its alias at once is an error.
	Aliases Aliases
	// Reason picks the application's own explanation out of its error
	// bodies (Config.Reason); nil selects DefaultReason.
	Reason ReasonFunc
}

// Aliases are an application's older setting names.
type Aliases struct {
	URL        string // the base URL under another name
	Credential string // the credential under another name (read from <name>_FILE)
	CAFile     string
	AllowHTTP  string
	// TimeoutMS is the deadline in whole milliseconds.
	TimeoutMS string
	// TimeoutSeconds is the deadline in whole seconds.
	TimeoutSeconds string
}

// Env are the setting names of an App.
type Env struct {
	URL string
	// Credential is the secret's name; the setting is Credential+"_FILE".
	// Empty for NoCredential.
	Credential                 string
	CAFile, AllowHTTP, Timeout string
}

// Env returns a's setting names.
func (a App) Env() Env {
	p := a.Prefix + "_"
	e := Env{URL: p + "URL", CAFile: p + "CA_FILE", AllowHTTP: p + "ALLOW_HTTP", Timeout: p + "TIMEOUT"}
	switch a.Credential {
	case APIKey:
		e.Credential = p + "API_KEY"
	case Token:
		e.Credential = p + "TOKEN"
	}
	return e
}

// Settings are an application's loaded settings.
type Settings struct {
	// URL is the validated base URL.
	URL string
	// Secret is the credential; nil without one.
	Secret    []byte
	CAFile    string
	AllowHTTP bool
	Timeout   time.Duration

	// Env are the names the settings were read from (aliases included),
	// for messages that tell the operator what to change.
	Env Env

	name   string
	header http.Header
	reason ReasonFunc
}

// Load reads a's settings through l, which records every problem (each
// names its setting, never its value): check l.Err() once all settings
// are read. configured is false for an Optional application left
// unconfigured (and then nothing is recorded).
func (a App) Load(l *config.Loader) (s Settings, configured bool) {
	env := a.Env()
	al := a.Aliases
	env.URL = l.Pick(env.URL, al.URL)
	if env.Credential != "" {
		env.Credential = strings.TrimSuffix(l.Pick(env.Credential+"_FILE", fileOf(al.Credential)), "_FILE")
		if al.Credential != "" && env.Credential != al.Credential && l.Set(al.Credential) {
			// The older name is refused in the environment too.
			l.OptionalSecret(al.Credential)
		}
	}
	if a.Optional && !l.Set(env.URL) && (env.Credential == "" || !l.Set(env.Credential+"_FILE")) {
		// A plain <APP>_API_KEY is refused all the same: a secret never
		// sits in the environment, configured or not.
		if env.Credential != "" {
			l.OptionalSecret(env.Credential)
		}
		return Settings{Env: env}, false
	}
	env.CAFile = l.Pick(env.CAFile, al.CAFile)
	env.AllowHTTP = l.Pick(env.AllowHTTP, al.AllowHTTP)
	s = Settings{
		CAFile:    l.File(env.CAFile),
		AllowHTTP: l.Bool(env.AllowHTTP, false),
		Env:       env,
		name:      a.Name,
		reason:    a.Reason,
	}
	if s.name == "" {
		s.name = a.Prefix
	}
	s.Timeout = a.timeout(l, &s.Env)
	switch {
	case env.Credential == "":
	case a.CredentialOptional:
		s.Secret, _ = l.OptionalSecret(env.Credential)
	default:
		s.Secret = l.Secret(env.Credential)
	}
	if s.Secret != nil {
		s.header = http.Header{}
		switch a.Credential {
		case APIKey:
			h := a.KeyHeader
			if h == "" {
				h = "X-Api-Key"
			}
			s.header.Set(h, string(s.Secret))
		case Token:
			s.header.Set("Authorization", "Bearer "+string(s.Secret))
		}
	}
	if !l.Set(env.URL) {
		l.Required(env.URL)
	} else if u := l.URL(env.URL, ""); u != nil {
		switch {
		case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
			l.Fail(env.URL, "must not have a query or a fragment")
		case u.Scheme == "http" && !s.AllowHTTP:
			l.Fail(env.AllowHTTP, "must be true when "+env.URL+" uses plain http:// (the credential then travels unencrypted); or use https://")
		default:
			s.URL = u.String()
		}
	}
	return s, true
}

// timeout reads <APP>_TIMEOUT, or its alias in milliseconds.
func (a App) timeout(l *config.Loader, env *Env) time.Duration {
	def := a.DefaultTimeout
	if def <= 0 {
		def = DefaultAppTimeout
	}
	name := env.Timeout
	// An older name counts whole units of a fixed size.
	for _, alias := range []struct {
		name string
		unit time.Duration
	}{{a.Aliases.TimeoutMS, time.Millisecond}, {a.Aliases.TimeoutSeconds, time.Second}} {
		if alias.name == "" || l.Pick(name, alias.name) != alias.name {
			continue
		}
		env.Timeout = alias.name
		hi := int(time.Hour / alias.unit)
		if a.MaxTimeout > 0 {
			hi = int(a.MaxTimeout / alias.unit)
		}
		return time.Duration(l.Int(alias.name, int(def/alias.unit), 1, hi)) * alias.unit
	}
	d := l.Duration(name, def)
	if a.MaxTimeout > 0 && d > a.MaxTimeout {
		l.Fail(name, "must be at most "+a.MaxTimeout.String())
		return def
	}
	return d
}

func fileOf(name string) string {
	if name == "" {
		return ""
	}
	return name + "_FILE"
}

// Config is the upstream.Config of the application: its base URL, CA file,
// plain-HTTP opt-in, deadline, credential header (and the credential among
// the secrets its reasons are redacted with) and reason extractor. Set the
// rest (byte cap, concurrency, user agent, logger) on the result.
func (s Settings) Config() Config {
	var secrets [][]byte
	if s.Secret != nil {
		secrets = [][]byte{s.Secret}
	}
	return Config{
		Name: s.name, Setting: s.Env.URL, BaseURL: s.URL, Timeout: s.Timeout, CAFile: s.CAFile, AllowHTTP: s.AllowHTTP,
		Header: s.header.Clone(), Secrets: secrets, Reason: s.reason,
	}
}

// String keeps the credential out of a log line that prints Settings.
func (s Settings) String() string {
	return s.name + " settings from " + s.Env.URL + " (credential not shown)"
}
