// Package policies ships toolgate's Rego policies and their default data
// inside the gateway binary, so POLICY_MODE=embedded evaluates exactly the
// files that `opa test policies/` checks and the OPA sidecar serves.
package policies

import "embed"

// FS holds every *.rego file of this directory (the *_test.rego files too;
// the loader skips them) and the data/ tree, laid out as on disk so that
// data/toolgate/groups.json ends up at data.data.toolgate.groups, as it does
// for `opa run --server policies/`.
//
//go:embed *.rego data
var FS embed.FS
