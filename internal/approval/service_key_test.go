package approval

import (
	"bytes"
	"encoding/hex"
	"errors"
	"testing"
	"time"
)

var master = []byte("the-gateway-master-approval-key-0123456789")

func serviceKey(t *testing.T, service string) []byte {
	t.Helper()
	k, err := ServiceKey(master, service)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestApprovalSignedWithOneServicesKeyIsRefusedByAnother: a compromised
// web (holding web's key) signs an approval for arr; arr refuses it. The
// gateway's master signer gives each service approvals only its own key
// verifies.
func TestApprovalSignedWithOneServicesKeyIsRefusedByAnother(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	clock := func() time.Time { return now }
	forArr := Approval{Service: "arr", Tool: "sonarr_grab", ArgsDigest: "d1", TicketID: "tkt_1", Expires: now.Add(time.Minute).Unix()}

	web, err := NewSigner(serviceKey(t, "web"))
	if err != nil {
		t.Fatal(err)
	}
	forged, err := web.Sign(forArr)
	if err != nil {
		t.Fatal(err)
	}
	arr, err := NewVerifier(serviceKey(t, "arr"), clock)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := arr.Verify(forged, "arr", "sonarr_grab", "d1"); !errors.Is(err, ErrSignature) {
		t.Fatalf("arr verified an approval signed with web's key: %v", err)
	}
	// Nor does the master key itself sign anything a service accepts.
	raw, _ := NewSigner(master)
	direct, _ := raw.Sign(forArr)
	if _, err := arr.Verify(direct, "arr", "sonarr_grab", "d1"); !errors.Is(err, ErrSignature) {
		t.Fatalf("arr verified an approval signed with the master key itself: %v", err)
	}

	gateway, err := NewMasterSigner(master)
	if err != nil {
		t.Fatal(err)
	}
	good, err := gateway.Sign(forArr)
	if err != nil {
		t.Fatal(err)
	}
	demo, _ := NewVerifier(serviceKey(t, "demo"), clock)
	if _, err := demo.Verify(good, "arr", "sonarr_grab", "d1"); !errors.Is(err, ErrSignature) {
		t.Fatalf("demo verified the gateway's approval for arr: %v", err)
	}
	if _, err := arr.Verify(good, "arr", "sonarr_grab", "d1"); err != nil {
		t.Fatalf("arr refused the gateway's approval for it: %v", err)
	}
}

func TestServiceKeyIsOwnDerivedAndHex(t *testing.T) {
	arr, web := serviceKey(t, "arr"), serviceKey(t, "web")
	again := serviceKey(t, "arr")
	other, err := ServiceKey([]byte("another-master-approval-key-0123456789ab"), "arr")
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case !bytes.Equal(arr, again):
		t.Error("the same master and service gave two keys")
	case bytes.Equal(arr, web), bytes.Equal(arr, other):
		t.Error("two services, or two masters, gave the same key")
	case bytes.Contains(arr, master), len(arr) != 64:
		t.Errorf("key %q: want 64 hex characters, not containing the master", arr)
	}
	if _, err := hex.DecodeString(string(arr)); err != nil {
		t.Errorf("key is not hex: %v", err)
	}
	// Names that only differ at the end still get unrelated keys.
	if bytes.Equal(serviceKey(t, "unraid"), serviceKey(t, "unraid-ssh")) {
		t.Error("unraid and unraid-ssh share a key")
	}
	for _, tc := range []struct {
		name, service string
		master        []byte
	}{
		{"short master", "arr", []byte("short")},
		{"no service", "", master},
	} {
		if _, err := ServiceKey(tc.master, tc.service); err == nil {
			t.Errorf("%s: derived a key", tc.name)
		}
		if tc.service != "" {
			if _, err := NewMasterSigner(tc.master); err == nil {
				t.Errorf("%s: master signer accepted", tc.name)
			}
		}
	}
	gateway, _ := NewMasterSigner(master)
	if _, err := gateway.Sign(Approval{Tool: "x", TicketID: "t"}); err == nil {
		t.Error("the master signer signed an approval for no service")
	}
}
