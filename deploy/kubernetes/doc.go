// Package kubernetes holds toolgate's Kubernetes manifests: a kustomize base
// (base/), one component per profile (components/) and the overlay users
// copy (example/). docs/kubernetes.md describes them. The package's tests
// build every profile combination with kustomize, decode every object
// strictly into the Kubernetes API types and check the security invariants
// (Pod Security "restricted", probes, resources, secrets, NetworkPolicy
// reachability) on each.
package kubernetes
