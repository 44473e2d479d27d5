package redact

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"unicode"
)

// decode parses a JSON literal the way services do (UseNumber).
func decode(t testing.TB, s string) any {
	t.Helper()
	var v any
	if err := unmarshalNumber([]byte(s), &v); err != nil {
		t.Fatalf("bad test JSON %s: %v", s, err)
	}
	return v
}

func TestValue(t *testing.T) {
	r := New([]byte(knownSecret))
	tests := []struct {
		name, in, want string
	}{
		{"no secrets", `{"title":"The Expanse","year":2015,"ratings":{"value":8.5},"tags":[1,2],"ended":false,"network":null}`,
			`{"title":"The Expanse","year":2015,"ratings":{"value":8.5},"tags":[1,2],"ended":false,"network":null}`},
		{"secret key every type", `{"password":"p","token":123,"apiKey":true,"secret":null,"credentials":{"user":"u","pass":"p"},"cookies":["a","b"],"auth":1.5e3}`,
			`{"password":"[REDACTED]","token":"[REDACTED]","apiKey":"[REDACTED]","secret":"[REDACTED]","credentials":"[REDACTED]","cookies":"[REDACTED]","auth":"[REDACTED]"}`},
		{"harmless lookalikes kept", `{"tokens_used":42,"nextPageToken":"abc","token_type":"Bearer","sessionKey":"7","key":"S01E02"}`,
			`{"tokens_used":42,"nextPageToken":"abc","token_type":"Bearer","sessionKey":"7","key":"S01E02"}`},
		{"flag bools kept", `{"hasPassword":true,"isSecret":false,"HasConfiguredPassword":true}`,
			`{"hasPassword":true,"isSecret":false,"HasConfiguredPassword":true}`},
		{"flag name with non-bool", `{"hasPassword":"hunter2","isToken":{"a":1}}`,
			`{"hasPassword":"[REDACTED]","isToken":"[REDACTED]"}`},
		{"nested arrays", `{"a":[[{"b":[{"api_key":"k","name":"x"}]}]]}`,
			`{"a":[[{"b":[{"api_key":"[REDACTED]","name":"x"}]}]]}`},
		{"strings in arrays", `["https://u:p@h/x","Bearer abcdef123456","ok"]`,
			`["https://[REDACTED]@h/x","Bearer [REDACTED]","ok"]`},
		{"provider field pair", `{"fields":[{"name":"apiKey","label":"API Key","value":"abc","privacy":"apiKey"},{"name":"baseUrl","value":"http://x"}]}`,
			`{"fields":[{"name":"apiKey","label":"API Key","value":"[REDACTED]","privacy":"apiKey"},{"name":"baseUrl","value":"http://x"}]}`},
		{"privacy password", `{"name":"pw","privacy":"password","value":"abc"}`,
			`{"name":"pw","privacy":"password","value":"[REDACTED]"}`},
		{"header pair", `[{"header":"X-Api-Key","value":"abc"},{"key":"Authorization","value":"Bearer q"}]`,
			`[{"header":"X-Api-Key","value":"[REDACTED]"},{"key":"Authorization","value":"[REDACTED]"}]`},
		{"docker env", `{"Env":["TZ=Europe/Berlin","SONARR__AUTH__APIKEY=abc","PATH=/bin"]}`,
			`{"Env":["TZ=Europe/Berlin","SONARR__AUTH__APIKEY=[REDACTED]","PATH=/bin"]}`},
		{"known value in key", `{"` + knownSecret + `":1,"x` + knownSecret + `":2}`,
			`{"[REDACTED]":1,"x[REDACTED]":2}`},
		{"secret key named by known value", `{"` + knownSecret + `-token":"v"}`,
			`{"[REDACTED]-token":"[REDACTED]"}`},
		{"url in key", `{"https://u:p@h/":1}`, `{"https://[REDACTED]@h/":1}`},
		{"redacted key collisions", `{"[REDACTED]":0,"` + knownSecret + `":1,"` + url.QueryEscape(knownSecret) + `":2}`,
			// sorted original keys: "k3y%2F..." < "k3y/..."
			`{"[REDACTED]":0,"[REDACTED]#2":2,"[REDACTED]#3":1}`},
		{"known value in number-ish string", `{"n":"` + knownSecret + `"}`, `{"n":"[REDACTED]"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := decode(t, tt.in)
			got := r.Value(in)
			if want := decode(t, tt.want); !reflect.DeepEqual(got, want) {
				g, _ := json.Marshal(got)
				t.Fatalf("Value(%s)\n got %s\nwant %s", tt.in, g, tt.want)
			}
			if !reflect.DeepEqual(in, decode(t, tt.in)) {
				t.Fatal("Value mutated its input")
			}
		})
	}
}

func TestValueKnownNumber(t *testing.T) {
	r := New([]byte("135791"))
	got := r.Value(map[string]any{"pin": json.Number("1357913"), "n": json.Number("42")})
	want := map[string]any{"pin": Marker, "n": json.Number("42")}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v", got)
	}
}

func TestValueReturnsDeepCopy(t *testing.T) {
	r := New()
	in := map[string]any{"a": []any{map[string]any{"b": "c"}}}
	out := r.Value(in).(map[string]any)
	out["a"].([]any)[0].(map[string]any)["b"] = "changed"
	out["new"] = 1
	if in["a"].([]any)[0].(map[string]any)["b"] != "c" || len(in) != 1 {
		t.Fatalf("output shares structure with input: %v", in)
	}
}

func TestValueOtherTypes(t *testing.T) {
	type creds struct {
		User     string `json:"user"`
		Password string `json:"password"`
		URL      string `json:"url"`
	}
	r := New([]byte(knownSecret))
	tests := []struct {
		name string
		in   any
		want any
	}{
		{"struct", creds{"bob", "hunter2", "https://bob:hunter2@h/"},
			map[string]any{"user": "bob", "password": Marker, "url": "https://[REDACTED]@h/"}},
		{"pointer to struct", &creds{User: "bob", Password: "x"},
			map[string]any{"user": "bob", "password": Marker, "url": ""}},
		{"typed map", map[string]string{"token": "t", "ok": "y"}, map[string]any{"token": Marker, "ok": "y"}},
		{"typed slice", []string{"a", knownSecret}, []any{"a", Marker}},
		{"raw message", json.RawMessage(`{"secret":1}`), map[string]any{"secret": Marker}},
		{"bytes with known", []byte("x" + knownSecret), Marker},
		{"bytes as text", []byte("?token=abc"), "?token=[REDACTED]"},
		{"int", 7, 7},
		{"uint64", uint64(7), uint64(7)},
		{"float32", float32(1.5), float32(1.5)},
		{"channel", make(chan int), Unsupported},
		{"func in map", map[string]any{"f": func() {}}, map[string]any{"f": Unsupported}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := r.Value(tt.in); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Value(%#v) = %#v, want %#v", tt.in, got, tt.want)
			}
		})
	}
}

func TestValueDepthLimit(t *testing.T) {
	r := New()
	for _, n := range []int{MaxDepth, MaxDepth + 1, 10_000} {
		// Alternate arrays and objects n levels deep, secret at the bottom.
		var v any = map[string]any{"password": "x"}
		for i := 0; i < n-1; i++ {
			if i%2 == 0 {
				v = []any{v}
			} else {
				v = map[string]any{"k": v}
			}
		}
		out := r.Value(v)
		// Walk down until a non-container value.
		depth := 0
		cur := out
		for {
			switch c := cur.(type) {
			case []any:
				cur = c[0]
			case map[string]any:
				if p, ok := c["password"]; ok {
					cur = p
				} else {
					cur = c["k"]
				}
			default:
				goto done
			}
			depth++
		}
	done:
		if n <= MaxDepth {
			if depth != n || cur != Marker {
				t.Fatalf("n=%d: depth %d leaf %v, want %d levels and Marker", n, depth, cur, n)
			}
		} else if depth != MaxDepth || cur != TooDeep {
			t.Fatalf("n=%d: depth %d leaf %v, want %d levels then TooDeep", n, depth, cur, MaxDepth)
		}
	}
}

func TestJSON(t *testing.T) {
	r := New([]byte(knownSecret))
	tests := []struct {
		name, in, want string
	}{
		{"object", `{"apiKey":"abc","n":12345678901234567890,"html":"<a&b>"}`, `{"apiKey":"[REDACTED]","html":"<a&b>","n":12345678901234567890}`},
		{"array whitespace", " [1, \"Bearer abcdef123\"] \n", `[1,"Bearer [REDACTED]"]`},
		{"scalar", `"?token=x"`, `"?token=[REDACTED]"`},
		{"invalid json is text", `{"password": "hunter2"`, `{"password": "[REDACTED]"`},
		{"trailing data is text", `{"a":1} token=abc`, `{"a":1} token=[REDACTED]`},
		{"two values are text", `{} {}`, `{} {}`},
		{"plain text", "Authorization: Bearer xyz123456\n" + knownSecret, "Authorization: Bearer [REDACTED]\n[REDACTED]"},
		{"empty", "", ""},
		{"too deep for decoder is text", strings.Repeat("[", 20_000), strings.Repeat("[", 20_000)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := r.JSON([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Fatalf("JSON(%.80q)\n got %.200s\nwant %.200s", tt.in, got, tt.want)
			}
		})
	}
}

// TestNoKnownSecretLeaks plants the known secrets (and their URL-encoded
// forms) everywhere a value can hide and checks the encoded output.
func TestNoKnownSecretLeaks(t *testing.T) {
	secrets := []string{knownSecret, "0123456789abcdef0123456789abcdef", "p@ss w0rd&x=y"}
	var known [][]byte
	for _, s := range secrets {
		known = append(known, []byte(s))
	}
	r := New(known...)
	var doc []any
	for _, s := range secrets {
		for _, form := range []string{s, url.QueryEscape(s), url.PathEscape(s)} {
			doc = append(doc, map[string]any{
				"plain":    form,
				"inside":   "before" + form + "after",
				form:       "as key",
				"x" + form: map[string]any{"nested": []any{[]any{form}}},
				"url":      "https://host/api?apikey=" + form + "&q=" + form,
				"ui":       "https://user:" + form + "@host/",
				"bearer":   "Bearer " + form,
				"number":   json.Number("1"),
				"list":     []any{form, 1.5, true, nil, "Cookie: " + form},
			})
		}
	}
	out, err := json.Marshal(r.Value(doc))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range secrets {
		for _, form := range []string{s, url.QueryEscape(s), url.PathEscape(s)} {
			if bytes.Contains(out, []byte(form)) {
				t.Errorf("secret form %q leaked in %s", form, out)
			}
			// encoding/json escapes & < >; check that form too.
			esc, _ := json.Marshal(form)
			if bytes.Contains(out, esc[1:len(esc)-1]) {
				t.Errorf("escaped secret form %s leaked", esc)
			}
		}
	}
	// Re-encoded by an upstream: base64 (both alphabets, padded or not, at
	// every alignment inside a longer blob), JSON escapes, lower-case
	// percent-encoding, HTML entities.
	var encodedDoc []any
	for _, s := range secrets {
		for _, form := range reencoded(s) {
			encodedDoc = append(encodedDoc, map[string]any{"plain": form, "inside": "<p>" + form + "</p>", form: "as key"})
		}
	}
	enc, err := json.Marshal(r.Value(encodedDoc))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range secrets {
		if leaked := revealsSecret(string(enc), s); leaked != "" {
			t.Errorf("secret %q leaked %s: %.2000s", s, leaked, enc)
		}
	}

	// The same document through JSON().
	raw, _ := json.Marshal(doc)
	out, err = r.JSON(raw)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range secrets {
		if bytes.Contains(out, []byte(s)) {
			t.Errorf("secret %q leaked through JSON()", s)
		}
	}
}

func FuzzString(f *testing.F) {
	const secret = "Zq9!secret"
	for _, s := range []string{
		"https://u:" + secret + "@h/?token=" + secret,
		"Bearer " + secret, "x" + secret + "y", `{"password":"` + secret + `"}`,
		"token=\"", "://@", "Basic ", "a=b:c", "\xff\xfe" + secret,
		"BeArer =0", "BeArer BeArer=0", // once not idempotent
		base64.StdEncoding.EncodeToString([]byte("x" + secret + "y")), "Zq9%21secret", "Zq9&#33;secret", `Zq9\u0021secret`,
		"/x?next=%2Fa%3Ftoken%3Dv%26b%3D1", "password => 'x'", "&quot;token&quot;:&quot;v&quot;",
		"/api/webhook/" + secret, "https://hooks.x/" + secret + "?a", "/webhooks/[REDACTED]/x", "@hooks./", "webhook_id=" + secret,
	} {
		f.Add(s)
	}
	r := New([]byte(secret))
	f.Fuzz(func(t *testing.T, s string) {
		out := r.String(s)
		if strings.Contains(out, secret) {
			t.Fatalf("known secret survived: %q -> %q", s, out)
		}
		if view, _, ok := decodedView(out); ok && strings.Contains(view, secret) {
			t.Fatalf("known secret survived encoded: %q -> %q", s, out)
		}
		if again := r.String(out); again != out {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, out, again)
		}
	})
}

// reencoded lists the ways an upstream may echo secret s.
func reencoded(s string) []string {
	var out []string
	for _, e := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		out = append(out, e.EncodeToString([]byte(s)))
		// Inside a longer blob, at each of the three alignments.
		for _, pre := range []string{"{\"k\":\"", "x{\"k\":\"", "xy{\"k\":\""} {
			out = append(out, e.EncodeToString([]byte(pre+s+"\",\"n\":1}")))
		}
	}
	jsonEsc, _ := json.Marshal(s)
	out = append(out,
		string(jsonEsc[1:len(jsonEsc)-1]),
		strings.ReplaceAll(string(jsonEsc[1:len(jsonEsc)-1]), "/", `\/`),
		strings.ToLower(url.QueryEscape(s)),
		strings.ToLower(url.PathEscape(s)),
		html.EscapeString(s),
		entities(s, "&#%d;"), entities(s, "&#x%x;"), entities(s, "&#X%X;"),
	)
	return out
}

// entities writes every character of s that is not a letter or digit as an
// HTML character reference in format.
func entities(s, format string) string {
	var b strings.Builder
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
			continue
		}
		fmt.Fprintf(&b, format, r)
	}
	return b.String()
}

// revealsSecret decodes out every way reencoded encodes and returns the
// form in which secret s can still be read, or "".
func revealsSecret(out, s string) string {
	if strings.Contains(out, s) {
		return "plain"
	}
	if u, err := url.PathUnescape(out); err == nil && strings.Contains(u, s) {
		return "percent-encoded"
	}
	if strings.Contains(html.UnescapeString(out), s) {
		return "html entities"
	}
	var js string
	if json.Unmarshal([]byte(`"`+strings.ReplaceAll(out, `"`, `\"`)+`"`), &js) == nil && strings.Contains(js, s) {
		return "json escapes"
	}
	// Every run of base64 characters, decoded at every offset.
	isB64 := func(r rune) bool {
		return r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("+/-_", r))
	}
	for _, run := range strings.FieldsFunc(out, func(r rune) bool { return !isB64(r) }) {
		for off := 0; off < 4 && off < len(run); off++ {
			part := run[off:]
			part = part[:len(part)/4*4]
			for _, e := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
				if d, err := e.DecodeString(part); err == nil && strings.Contains(string(d), s) {
					return "base64"
				}
			}
		}
	}
	return ""
}
