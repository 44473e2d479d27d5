// Package redact removes secrets from tool results, audit records and log
// values before they leave a toolgate process.
//
// A [Redactor] applies two kinds of rules to JSON-like values.
//
// # Key-name rules
//
// A map key is a secret key when its name, lower-cased and with '_', '-',
// '.' and ' ' removed ("normalized"), matches the table below. The value
// under a secret key is replaced whole by [Marker], whatever its type
// (objects and arrays included).
//
//	rule          words                                           examples that match
//	ends with     password passwd passphrase passwords            password, db_password, newPassword
//	              secret secrets                                  client_secret, secrets
//	              token                                           token, accessToken, X-Plex-Token, csrf_token
//	              apikey apikeys                                  apiKey, api_key, X-Api-Key, SONARR_API_KEY
//	              accesskey secretkey privatekey                  secret_access_key, ssh-private-key
//	              encryptionkey signingkey masterkey
//	              credential credentials                          credentials, aws_credential
//	              authorization                                   Authorization, Proxy-Authorization
//	              cookie cookies                                  Cookie, Set-Cookie, cookies
//	              sessionid                                       sessionId, JSESSIONID
//	              bearer                                          bearer
//	              webhookurl cloudhookurl                         discordWebhookUrl, cloudhook_url (the URL embeds a token)
//	              webhookid webhookids                            webhook_id (Home Assistant: knowing it triggers the automation)
//	              passkey rsskey authkey                          passKey, rss_key (private trackers' per-user keys)
//	equals        auth pass pwd pw                                auth (docker config.json), pass, pwd, pw
//	last word     pass pw (after _ - . or space, or capitalised)   DB_PASS, MQTT_PW, otaPass (not bypass)
//
// Deliberately not secret, because home-lab APIs use them for harmless data:
//
//	tokens_used, maxTokens, inputTokens   the plural "tokens" is a count in AI/LLM APIs
//	token_type, tokenExpiry               only a name that ENDS in a word matches
//	nextPageToken, continuationToken,     pagination cursors ("pagetoken", "continuationtoken",
//	NextToken                             "nexttoken" suffixes) are opaque but not credentials
//	sessionKey, session                   Plex/Tautulli playback session numbers and objects
//	key, signature                        too generic as JSON keys ("key": "S01E02")
//	hasPassword, isSecret (bool values)   a name starting with "has"/"is" whose value is a
//	                                      bool keeps the bool; any other value is redacted
//
// A key name alone cannot cover name/value pairs such as Sonarr provider
// fields or header lists ({"name": "apiKey", "value": "..."}): when an object
// has a "value" member and its "name", "key", "field" or "header" member is a
// string naming a secret key (or "privacy" is "apiKey"/"password"), the
// "value" member is redacted too.
//
// # Free-text rules
//
// Every string (values and map keys alike) passes these rules, in order:
//
//  1. Known secret values registered with [New] (each at least
//     [MinKnownLen] bytes, plus their URL query- and path-escaped forms and
//     their base64 forms in the standard and URL alphabets, padded or not,
//     also inside a longer base64 blob at any alignment) are replaced
//     wherever they occur, inside longer strings too.
//  2. Decoded view: when the string holds percent-escapes (either case),
//     JSON string escapes ("\/", "\u002b") or HTML character references
//     ("&#43;", "&#x2B;", "&amp;"), one level of them is undone in a copy;
//     known values and the pairs of rule 5 found in that copy are replaced
//     in the original bytes that encode them, so
//     "?next=%2Fapi%3Fapikey%3Dabc" becomes "?next=%2Fapi%3Fapikey%3D[REDACTED]"
//     and the encoding of the rest stays as it was.
//  3. URL userinfo: "https://user:pass@host/" becomes
//     "https://[REDACTED]@host/".
//  4. "Bearer <token>" and "Basic <base64 of user:pass>" keep the scheme
//     word and lose the credential. A Bearer "token" that is a short
//     lower-case word ("Bearer authentication") is prose and kept.
//  5. name=value, name: value and name => value pairs whose name is a
//     secret key or one of
//     the query-parameter names key, sig, signature (suffix), session, sid:
//     URL query parameters (?apikey=..&token=..), fragments
//     (#access_token=..), form bodies, environment entries
//     (SONARR_API_KEY=...), header lines (X-Api-Key: ...; Authorization,
//     Cookie and Set-Cookie lines lose everything up to the end of the line),
//     quoted JSON-ish text ("password": "...") and Perl/PHP/Ruby hashes
//     (password => '...'). An unquoted value ends at
//     whitespace or one of & # , ; " ' < > ) ] } ` \ ; a secret containing
//     one of those is only partly caught unless it is a known value.
//  6. Webhook URLs: the rest of the path after a "webhook" or "webhooks"
//     segment ("/api/webhook/[REDACTED]", Discord's
//     "/api/webhooks/[REDACTED]") and the whole path of a URL whose host
//     starts with "hooks." ("https://hooks.nabu.casa/[REDACTED]"); the
//     query and fragment stay. Not in the decoded view: a percent- or
//     JSON-escaped hook path is not caught.
//  7. Credentials known by their shape, with no name in front: a JWT, JWS
//     or JWE in compact form (base64url parts joined by at least two dots,
//     the first a JSON header "eyJ…" of at least ten characters); a
//     Telegram-style bot token "<5-20 digits>:<30 or more base64url
//     characters>", alone or after "bot" in a URL path
//     ("/bot[REDACTED]/sendMessage"); and "user:password@host[:port]"
//     written without a scheme, as proxy settings are
//     ("HTTPS_PROXY=[REDACTED]@proxy.lan:3128"). The last needs the host
//     to end the token or be followed by a numeric port or a path, so
//     "mailto:", "sip:" and other "scheme:user@host" forms, e-mail
//     addresses and container digests ("nginx:1.25@sha256:…") stay.
//  8. Keys a vendor writes with a fixed prefix (GitHub "ghp_…", OpenAI
//     "sk-…", Slack "xoxb-…", Google "AIza…", ntfy "tk_…", toolgate's own
//     "tg_…" and more: vendorTokens), when the prefix starts a word and the
//     rest has the vendor's length: "ghp_[REDACTED]".
//
// The rules prefer over-redaction ("Primary key: id" loses "id") to leaks.
//
// # Hostile input
//
// Every rule is a single linear scan, so huge strings finish; a string is
// searched for the known forms only when a 16-bit hash of some four bytes in
// it matches the start of one, which keeps the extra forms nearly free. Nesting deeper
// than [MaxDepth] is replaced by [TooDeep]. Invalid UTF-8 is passed through
// byte for byte (encoding/json later replaces it with U+FFFD).
package redact
