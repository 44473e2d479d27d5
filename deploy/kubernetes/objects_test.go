package kubernetes

import (
	"errors"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	k8sjson "sigs.k8s.io/json"
	"sigs.k8s.io/kustomize/api/resmap"
)

// Objects is one build's output, each object decoded into its Kubernetes
// API type. Only these kinds may appear: anything else (a DaemonSet, a
// Role, a typo in a kind) fails decoding until the checks know about it.
type Objects struct {
	Namespaces      []corev1.Namespace
	ServiceAccounts []corev1.ServiceAccount
	Deployments     []appsv1.Deployment
	Services        []corev1.Service
	ConfigMaps      []corev1.ConfigMap
	Secrets         []corev1.Secret
	PVCs            []corev1.PersistentVolumeClaim
	NetworkPolicies []networkingv1.NetworkPolicy
}

// DecodeStrict decodes one object as the API server's strict field
// validation would: case-sensitive field names, no unknown fields, no
// duplicate fields, and the apiVersion its kind belongs to.
func (o *Objects) DecodeStrict(apiVersion, kind string, doc []byte) error {
	var target any
	want := "v1"
	switch kind {
	case "Namespace":
		o.Namespaces = append(o.Namespaces, corev1.Namespace{})
		target = &o.Namespaces[len(o.Namespaces)-1]
	case "ServiceAccount":
		o.ServiceAccounts = append(o.ServiceAccounts, corev1.ServiceAccount{})
		target = &o.ServiceAccounts[len(o.ServiceAccounts)-1]
	case "Deployment":
		want = "apps/v1"
		o.Deployments = append(o.Deployments, appsv1.Deployment{})
		target = &o.Deployments[len(o.Deployments)-1]
	case "Service":
		o.Services = append(o.Services, corev1.Service{})
		target = &o.Services[len(o.Services)-1]
	case "ConfigMap":
		o.ConfigMaps = append(o.ConfigMaps, corev1.ConfigMap{})
		target = &o.ConfigMaps[len(o.ConfigMaps)-1]
	case "Secret":
		o.Secrets = append(o.Secrets, corev1.Secret{})
		target = &o.Secrets[len(o.Secrets)-1]
	case "PersistentVolumeClaim":
		o.PVCs = append(o.PVCs, corev1.PersistentVolumeClaim{})
		target = &o.PVCs[len(o.PVCs)-1]
	case "NetworkPolicy":
		want = "networking.k8s.io/v1"
		o.NetworkPolicies = append(o.NetworkPolicies, networkingv1.NetworkPolicy{})
		target = &o.NetworkPolicies[len(o.NetworkPolicies)-1]
	default:
		return fmt.Errorf("kind %s (%s) is not one the checks know", kind, apiVersion)
	}
	if apiVersion != want {
		return fmt.Errorf("%s has apiVersion %q, want %q", kind, apiVersion, want)
	}
	strict, err := k8sjson.UnmarshalStrict(doc, target, k8sjson.DisallowDuplicateFields, k8sjson.DisallowUnknownFields)
	if err != nil {
		return fmt.Errorf("%s: %w", kind, err)
	}
	if len(strict) > 0 {
		return fmt.Errorf("%s: %w", kind, errors.Join(strict...))
	}
	return nil
}

// decodeResMap decodes every resource kustomize built.
func decodeResMap(m resmap.ResMap) (*Objects, error) {
	o := &Objects{}
	var errs []error
	for _, r := range m.Resources() {
		doc, err := r.MarshalJSON()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if err := o.DecodeStrict(r.GetApiVersion(), r.GetKind(), doc); err != nil {
			errs = append(errs, fmt.Errorf("%s/%s: %w", r.GetKind(), r.GetName(), err))
		}
	}
	return o, errors.Join(errs...)
}
