package mask

import (
	"strings"
	"testing"
)

func TestText(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{"password value", "  password: hunter2", "  password: ***"},
		{"quoted api key", `  api_key: "abc def"`, "  api_key: ***"},
		{"a comment beside a credential goes too", "  token: abc123 # rotate yearly", "  token: *** # ***"},
		{"other comments stay", "  port: 1883 # rotate yearly", "  port: 1883 # rotate yearly"},
		{"commented-out block", "# password: old-one", "# password: ***"},
		{"secret name", "  password: !secret mqtt_password", "  password: !secret ***"},
		{"secret name quoted", `  api_key: !secret "router key"`, "  api_key: !secret ***"},
		{"secret in a list", "  hosts: [!secret a, !secret b]", "  hosts: [!secret ***, !secret ***]"},
		{"env var left alone", "  password: !env_var DB_PASS", "  password: !env_var DB_PASS"},
		{"include left alone", "  credentials: !include creds.yaml", "  credentials: !include creds.yaml"},
		{"userinfo", "  url: mqtt://ha:pw123@broker:1883", "  url: mqtt://ha:***@broker:1883"},
		{"flow mapping", "  broker: {user: a, password: b, port: 1}", "  broker: {user: a, password: ***, port: 1}"},
		{"key=value", "  db_url: x?user=a&password=b", "  db_url: x?user=a&password=***"},
		{"prose", "Invalid config: password: x is wrong", "Invalid config: password: ***"},
		{"harmless keys", "  name: Kitchen\n  entity_id: light.kitchen", "  name: Kitchen\n  entity_id: light.kitchen"},
		{"block scalar", "  password: |\n    x", "  password: ***\n"},
		{"line numbers kept", "a: 1\npassword: 2\nb: 3", "a: 1\npassword: ***\nb: 3"},
		{"webhook trigger id", "    - platform: webhook\n      webhook_id: -Xk9_planted-id", "    - platform: webhook\n      webhook_id: ***"},
		{"webhook id quoted", `      webhook_id: "garage-open-7f3a"  # from the phone`, `      webhook_id: ***  # ***`},
		{"webhook url", "  resource: https://ha.lan:8123/api/webhook/-Xk9_planted-id?x=1", "  resource: https://ha.lan:8123/api/webhook/***?x=1"},
		{"relative webhook url", `  url: "/api/webhook/abc123"`, `  url: "/api/webhook/***"`},
		{"cloudhook", "# cloudhook: https://hooks.nabu.casa/gAAAAAB-planted", "# cloudhook: https://hooks.nabu.casa/***"},
		{"webhook words stay", "  platform: webhook\n  allowed_methods: [POST]", "  platform: webhook\n  allowed_methods: [POST]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Text(c.in); got != c.want {
				t.Errorf("Text(%q)\n got %q\nwant %q", c.in, got, c.want)
			}
			if strings.Count(Text(c.in), "\n") != strings.Count(c.in, "\n") {
				t.Error("line count changed")
			}
		})
	}
}

func TestValue(t *testing.T) {
	if got := Value("password", "x"); got != Masked {
		t.Errorf("Value(password) = %q", got)
	}
	if got := Value("alias", "Kitchen"); got != "Kitchen" {
		t.Errorf("Value(alias) = %q", got)
	}
}
