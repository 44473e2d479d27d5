package redact

import (
	"strings"
	"testing"
)

func TestIsSecretKey(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		// Secret: every table word, with case, '_' and '-' variations.
		{"password", true},
		{"Password", true},
		{"db_password", true},
		{"newPassword", true},
		{"passwords", true},
		{"passwd", true},
		{"PASSPHRASE", true},
		{"secret", true},
		{"client_secret", true},
		{"Secrets", true},
		{"token", true},
		{"accessToken", true},
		{"refresh_token", true},
		{"X-Plex-Token", true},
		{"csrf-token", true},
		{"apiKey", true},
		{"api_key", true},
		{"API-KEY", true},
		{"x-api-key", true},
		{"SONARR_API_KEY", true},
		{"apikeys", true},
		{"aws_secret_access_key", true},
		{"secretKey", true},
		{"ssh-private-key", true},
		{"privateKey", true},
		{"encryption_key", true},
		{"signingKey", true},
		{"masterKey", true},
		{"credential", true},
		{"credentials", true},
		{"Authorization", true},
		{"proxy-authorization", true},
		{"cookie", true},
		{"Set-Cookie", true},
		{"cookies", true},
		{"sessionId", true},
		{"JSESSIONID", true},
		{"session_id", true},
		{"bearer", true},
		{"discordWebhookUrl", true},
		{"webhook_id", true},
		{"webhookId", true},
		{"WEBHOOK-IDS", true},
		{"cloudhook_url", true},
		{"auth", true},
		{"AUTH", true},
		{"pass", true},
		{"pwd", true},
		{"hasPassword", true}, // the name is secret; Value keeps bool values (tested there)
		// "pass" and "pw" as the last word of a name (env files, ESPHome).
		{"DB_PASS", true},
		{"mqtt-pass", true},
		{"otaPass", true},
		{"SMTP_PW", true},
		{"wifi.pw", true},
		{"adminPw", true},
		{"pw", true},
		{"passkey", true},
		{"passKey", true},
		{"rss_key", true},
		{"authKey", true},
		{strings.Repeat("x", 200) + "_token", true},
		{strings.Repeat("_", 200) + "password", true},

		// Not secret.
		{"tokens_used", false},
		{"tokensUsed", false},
		{"maxTokens", false},
		{"input_tokens", false},
		{"token_type", false},
		{"tokenExpiry", false},
		{"nextPageToken", false},
		{"page_token", false},
		{"continuationToken", false},
		{"NextToken", false},
		{"sessionKey", false},
		{"session", false},
		{"sessions", false},
		{"key", false},
		{"signature", false},
		{"author", false},
		{"authority", false},
		{"bypass", false},
		{"compass", false},
		{"BYPASS", false},
		{"overpass", false},
		{"PASSWORD_REQUIRED_pass_through", false},
		{"ipw", false},
		{"passwordRequired", false},
		{"title", false},
		{"monkey", false},
		{"publicKey", false},
		{"", false},
		{"___", false},
		{"pass" + strings.Repeat("x", 100), false},
	}
	for _, tt := range tests {
		if got := IsSecretKey(tt.name); got != tt.want {
			t.Errorf("IsSecretKey(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestIsSecretParam(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{"key", true},
		{"KEY", true},
		{"sig", true},
		{"X-Amz-Signature", true},
		{"session", true},
		{"sid", true},
		{"apikey", true},
		{"MYSQL_PASS", true},
		{"monkey", false},
		{"keys", false},
		{"lastWrite", false},
	}
	for _, tt := range tests {
		if got := isSecretParam(tt.name); got != tt.want {
			t.Errorf("isSecretParam(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestIsSecretKeyDoesNotAllocate(t *testing.T) {
	long := strings.Repeat("y", 300)
	allocs := testing.AllocsPerRun(100, func() {
		IsSecretKey("X-Api-Key")
		IsSecretKey("seasonNumber")
		IsSecretKey(long)
	})
	if allocs != 0 {
		t.Fatalf("IsSecretKey allocated %v times per run", allocs)
	}
}

func TestOnlyHarmlessHeadersAreNamedHarmless(t *testing.T) {
	for _, h := range []string{"Accept", "accept-language", "User-Agent", "user_agent", "Content-Type", " Referer ", "X-Requested-With", "DNT"} {
		if !HarmlessHeader(h) {
			t.Errorf("HarmlessHeader(%q) = false", h)
		}
	}
	for _, h := range []string{"X-Auth", "Authorization", "X-Api-Key", "Cookie", "X-Line", "X-Custom-Credential", "Accept-Token", "User-Agent-Token", "", "Proxy-Authorization", "X-Forwarded-For"} {
		if HarmlessHeader(h) {
			t.Errorf("HarmlessHeader(%q) = true", h)
		}
	}
}
