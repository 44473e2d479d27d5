package mask

import (
	"strings"

	"github.com/toolgate/toolgate/internal/redact"
)

// haSecretKeys are key names that hold a credential in Home Assistant's
// configuration without sounding like one to internal/redact: the code of
// an alarm panel or a lock (manual and template alarm panels, envisalink,
// alarm_control_panel.alarm_disarm's and lock.unlock's data), PINs and
// user codes (zwave_js.set_lock_usercode), a Wi-Fi pre-shared key, and
// device keys (Tuya's local_key, Z-Wave's network_key). Compared
// normalized: lower case, without '_', '-', '.' and spaces.
// A gateway's "key" (xiaomi_aqara's gateways) is its encryption key.
var haSecretKeys = []string{
	"code", "codetemplate", "pin", "pincode", "passcode", "usercode", "alarmcode", "armcode",
	"disarmcode", "mastercode", "accesscode", "securitycode", "lockcode", "keypadcode",
	"psk", "localkey", "networkkey", "key",
}

// IsSecretKey reports whether the value under a key of this name is a
// credential: redact's rules plus Home Assistant's own (haSecretKeys).
func IsSecretKey(name string) bool {
	name = strings.Trim(name, " \t\r\n\"'")
	if redact.IsSecretKey(name) {
		return true
	}
	// In a template the key is a path: trigger.event.data.code.
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		name = name[i+1:]
	}
	n := normalize(name)
	for _, k := range haSecretKeys {
		if n == k {
			return true
		}
	}
	return false
}

// normalize lower-cases name and drops the separators redact ignores.
func normalize(name string) string {
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case c == '_' || c == '-' || c == '.' || c == ' ':
		case 'A' <= c && c <= 'Z':
			b.WriteByte(c + 'a' - 'A')
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// isHeadersKey names the request headers of an integration (rest,
// rest_command, scrape, the generic camera, …).
func isHeadersKey(name string) bool {
	return normalize(strings.Trim(name, " \t\"'")) == "headers"
}
