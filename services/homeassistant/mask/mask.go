// Package mask hides credentials in Home Assistant configuration text before
// it leaves the service. It works on raw text, comments included, because
// commented-out blocks are exactly where old credentials survive, and it
// keeps every line where it was, so the result can still be read against
// the file: a hidden value becomes "***" on its first line, and the other
// lines it spanned stay as empty lines.
//
// What it hides:
//   - the value of every key that names a credential (internal/redact's key
//     rules plus Home Assistant's own: an alarm panel's or a lock's code,
//     PINs, user codes, pre-shared and device keys), however the value is
//     written: plain, quoted (over several lines too), as a flow
//     collection, as a block scalar ("password: |"), on the lines below
//     the key, continued on deeper lines, behind an anchor or a tag, and
//     the anchored value an alias under such a key stands for;
//   - the same for keys the loader reads differently from how they look
//     (escaped or explicit keys, keys given as aliases), found by parsing;
//   - every header of a "headers:" mapping but the harmless ones
//     (User-Agent, Accept, Content-Type, …): a credential can stand under
//     any name (X-Auth);
//   - the names behind !secret and the default of "!env_var NAME default";
//   - user:password@ in URLs, webhook ids in webhook URLs (/api/webhook/<id>,
//     https://hooks.nabu.casa/<token>);
//   - credentials on command lines (curl -u user:pass, --password x,
//     sshpass -p, mosquitto_pub -P, mysql -p…).
//
// Shapes that are no Home Assistant knowledge (Bearer tokens, JWTs,
// name=value pairs in free text) are internal/redact's, which every result
// passes after this.
package mask

import "strings"

// Masked replaces a hidden value.
const Masked = "***"

// SecretMasked replaces the name behind a !secret tag.
const SecretMasked = "!secret " + Masked

// Text masks credentials in configuration text. Structure, comments and
// line numbers are kept.
func Text(s string) string {
	if s == "" {
		return s
	}
	t := &textScanner{s: s, lines: lineTable(s)}
	t.scan()
	if strings.IndexByte(s, ':') >= 0 {
		structural(t)
	}
	for _, rule := range []func(string, func(int, int)){secretNames, envDefaults, userinfo, hookPaths, commandLines} {
		rule(s, t.hide)
	}
	return render(s, t.spans)
}

// Value masks a scalar value that sits under key in structured data.
func Value(key, value string) string {
	if IsSecretKey(key) && value != "" {
		return Masked
	}
	return Text(value)
}

// EnvVarValue is the value of an !env_var tag as shown: the variable's
// name, and its default (the rest, as Home Assistant's loader splits it)
// masked.
func EnvVarValue(v string) string {
	f := strings.Fields(v)
	switch len(f) {
	case 0:
		return v
	case 1:
		return f[0]
	}
	return f[0] + " " + Masked
}
