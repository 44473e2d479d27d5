package policies

import (
	"crypto/sha256"
	"encoding/hex"
)

// SidecarTokenHashEnv is the environment variable policies/system/authz.rego
// reads (through opa.runtime().env) to recognise the gateway: the hex
// SHA-256 of the gateway's policy token. The sidecar holds the hash only, so
// the token itself is in no environment and no OPA document.
const SidecarTokenHashEnv = "TOOLGATE_POLICY_TOKEN_SHA256"

// SidecarTokenHash is the value of SidecarTokenHashEnv for token.
func SidecarTokenHash(token []byte) string {
	sum := sha256.Sum256(token)
	return hex.EncodeToString(sum[:])
}
