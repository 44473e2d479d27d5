package kubernetes

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	psaapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
)

// What every build must keep.
const (
	Namespace = "toolgate"
	UID       = 65532
	// ServicePort is where every tool service serves /mcp, /healthz, /readyz.
	ServicePort = 8000
)

// Component labels (app.kubernetes.io/component) and what they mean.
const (
	labelName      = "app.kubernetes.io/name"
	labelComponent = "app.kubernetes.io/component"
	labelUpstream  = "toolgate/upstream"
	labelDemo      = "toolgate/demo"
	labelClient    = "toolgate/client"

	roleGateway = "gateway"
	rolePolicy  = "policy"
	roleTool    = "tool"
	roleFixture = "fixture" // the demo's fake upstreams
)

var imageRE = regexp.MustCompile(`^toolgate/([a-z][a-z0-9-]*):[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)

// Check returns every violation of toolgate's deployment invariants in o,
// with s saying where the LAN is; none means the build is fine.
func Check(o *Objects, s Spec) []error {
	c := &checker{o: o}
	c.namespace()
	c.names()
	c.serviceAccounts()
	for i := range o.Deployments {
		c.deployment(&o.Deployments[i])
	}
	c.services()
	c.routes()
	c.policyEngine()
	c.pvcs()
	c.errs = append(c.errs, CheckReachability(o, s)...)
	return c.errs
}

type checker struct {
	o    *Objects
	errs []error
}

func (c *checker) fail(format string, args ...any) {
	c.errs = append(c.errs, fmt.Errorf(format, args...))
}

func (c *checker) namespace() {
	if len(c.o.Namespaces) != 1 || c.o.Namespaces[0].Name != Namespace {
		c.fail("want exactly the namespace %q, got %d namespaces", Namespace, len(c.o.Namespaces))
		return
	}
	labels := c.o.Namespaces[0].Labels
	for _, mode := range []string{"enforce", "audit", "warn"} {
		key := "pod-security.kubernetes.io/" + mode
		if labels[key] != "restricted" {
			c.fail("namespace: %s = %q, want restricted", key, labels[key])
		}
		if v := labels[key+"-version"]; v != "latest" {
			c.fail("namespace: %s-version = %q, want latest", key, v)
		}
	}
	ns := func(kind, name, got string) {
		if got != Namespace {
			c.fail("%s/%s is in namespace %q, want %q", kind, name, got, Namespace)
		}
	}
	for _, x := range c.o.ServiceAccounts {
		ns("ServiceAccount", x.Name, x.Namespace)
	}
	for _, x := range c.o.Deployments {
		ns("Deployment", x.Name, x.Namespace)
	}
	for _, x := range c.o.Services {
		ns("Service", x.Name, x.Namespace)
	}
	for _, x := range c.o.ConfigMaps {
		ns("ConfigMap", x.Name, x.Namespace)
	}
	for _, x := range c.o.Secrets {
		ns("Secret", x.Name, x.Namespace)
	}
	for _, x := range c.o.PVCs {
		ns("PersistentVolumeClaim", x.Name, x.Namespace)
	}
	for _, x := range c.o.NetworkPolicies {
		ns("NetworkPolicy", x.Name, x.Namespace)
	}
}

// names: what the API server's validation would refuse in names, labels,
// keys and ports.
func (c *checker) names() {
	bad := func(kind, name string, problems []string) {
		if len(problems) > 0 {
			c.fail("%s %q: %s", kind, name, strings.Join(problems, "; "))
		}
	}
	meta := func(kind string, m metav1.ObjectMeta) {
		if m.Name != "" || kind != "Deployment pod" {
			bad(kind+" name", m.Name, validation.IsDNS1123Subdomain(m.Name))
		}
		for k, v := range m.Labels {
			bad(kind+"/"+m.Name+" label key", k, validation.IsQualifiedName(k))
			bad(kind+"/"+m.Name+" label value", v, validation.IsValidLabelValue(v))
		}
	}
	for _, x := range c.o.Namespaces {
		meta("Namespace", x.ObjectMeta)
	}
	for _, x := range c.o.ServiceAccounts {
		meta("ServiceAccount", x.ObjectMeta)
	}
	for _, x := range c.o.Deployments {
		meta("Deployment", x.ObjectMeta)
		meta("Deployment pod", x.Spec.Template.ObjectMeta)
		for _, ct := range x.Spec.Template.Spec.Containers {
			bad("container name", ct.Name, validation.IsDNS1123Label(ct.Name))
			for _, p := range ct.Ports {
				if p.Name != "" {
					bad("port name", p.Name, validation.IsValidPortName(p.Name))
				}
			}
			for _, e := range ct.Env {
				bad("env name", e.Name, validation.IsEnvVarName(e.Name))
			}
		}
	}
	for _, x := range c.o.Services {
		meta("Service", x.ObjectMeta)
		bad("Service name", x.Name, validation.IsDNS1035Label(x.Name))
		for _, p := range x.Spec.Ports {
			bad("Service port name", p.Name, validation.IsValidPortName(p.Name))
		}
	}
	for _, x := range c.o.ConfigMaps {
		meta("ConfigMap", x.ObjectMeta)
		for k := range x.Data {
			bad("ConfigMap/"+x.Name+" key", k, validation.IsConfigMapKey(k))
		}
	}
	for _, x := range c.o.Secrets {
		meta("Secret", x.ObjectMeta)
		for k := range x.Data {
			bad("Secret/"+x.Name+" key", k, validation.IsConfigMapKey(k))
		}
	}
	for _, x := range c.o.PVCs {
		meta("PersistentVolumeClaim", x.ObjectMeta)
	}
	for _, x := range c.o.NetworkPolicies {
		meta("NetworkPolicy", x.ObjectMeta)
	}
}

func (c *checker) serviceAccounts() {
	for _, sa := range c.o.ServiceAccounts {
		if sa.AutomountServiceAccountToken == nil || *sa.AutomountServiceAccountToken {
			c.fail("ServiceAccount/%s: automountServiceAccountToken must be false", sa.Name)
		}
	}
}

// restricted is the Pod Security Admission evaluator the API server runs
// for the namespace's enforce label.
var restricted = func() policy.Evaluator {
	e, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		panic(err)
	}
	return e
}()

func (c *checker) deployment(d *appsv1.Deployment) {
	where := "Deployment/" + d.Name
	spec := &d.Spec.Template.Spec
	labels := d.Spec.Template.Labels
	role := labels[labelComponent]

	// Pod Security "restricted", exactly as admission evaluates it.
	for _, r := range restricted.EvaluatePod(psaapi.LevelVersion{Level: psaapi.LevelRestricted, Version: psaapi.LatestVersion()}, &d.Spec.Template.ObjectMeta, spec) {
		if !r.Allowed {
			c.fail("%s: Pod Security restricted: %s: %s", where, r.ForbiddenReason, r.ForbiddenDetail)
		}
	}

	if labels[labelName] != d.Name {
		c.fail("%s: pod label %s = %q, want the Deployment's name", where, labelName, labels[labelName])
	}
	if sel := d.Spec.Selector; sel == nil || len(sel.MatchExpressions) > 0 || !mapsEqual(sel.MatchLabels, map[string]string{labelName: d.Name}) {
		c.fail("%s: selector must be exactly %s=%s", where, labelName, d.Name)
	}
	switch role {
	case roleGateway, rolePolicy, roleTool, roleFixture:
	default:
		c.fail("%s: %s = %q is not a known role", where, labelComponent, role)
	}
	if role == roleTool && d.Name != "web" && labels[labelDemo] == "" && labels[labelUpstream] != "lan" {
		c.fail("%s: a tool service that talks to a home-lab application needs %s=lan", where, labelUpstream)
	}
	if role != roleTool && labels[labelUpstream] != "" {
		c.fail("%s: only tool services may carry %s", where, labelUpstream)
	}
	if labels[labelClient] != "" {
		c.fail("%s: toolgate's own pods are never clients (%s)", where, labelClient)
	}

	// The pod.
	if spec.ServiceAccountName != "toolgate" {
		c.fail("%s: serviceAccountName = %q, want toolgate", where, spec.ServiceAccountName)
	}
	if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
		c.fail("%s: automountServiceAccountToken must be false", where)
	}
	// Service links put <SERVICE>_PORT=tcp://… variables into every pod,
	// where names like SONARR_PORT could shadow a service's settings.
	if spec.EnableServiceLinks == nil || *spec.EnableServiceLinks {
		c.fail("%s: enableServiceLinks must be false", where)
	}
	if spec.HostNetwork || spec.HostPID || spec.HostIPC {
		c.fail("%s: host namespaces", where)
	}
	psc := spec.SecurityContext
	if psc == nil {
		c.fail("%s: no pod securityContext", where)
		psc = &corev1.PodSecurityContext{}
	}
	if !isTrue(psc.RunAsNonRoot) {
		c.fail("%s: pod runAsNonRoot must be true", where)
	}
	if !isInt(psc.RunAsUser, UID) || !isInt(psc.RunAsGroup, UID) || !isInt(psc.FSGroup, UID) {
		c.fail("%s: pod runAsUser, runAsGroup and fsGroup must be %d", where, UID)
	}
	if psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		c.fail("%s: pod seccompProfile must be RuntimeDefault", where)
	}
	volumes := map[string]*corev1.Volume{}
	for i := range spec.Volumes {
		v := &spec.Volumes[i]
		volumes[v.Name] = v
		c.volume(where, v)
	}
	if len(spec.InitContainers) > 0 || len(spec.EphemeralContainers) > 0 {
		c.fail("%s: init or ephemeral containers are not expected", where)
	}
	if len(spec.Containers) != 1 {
		c.fail("%s: want exactly one container, got %d", where, len(spec.Containers))
	}
	for i := range spec.Containers {
		c.container(where, role, psc, &spec.Containers[i], volumes)
		if m := imageRE.FindStringSubmatch(spec.Containers[i].Image); m != nil && m[1] != d.Name {
			c.fail("%s: runs image %s; each Deployment runs its own toolgate/%s", where, spec.Containers[i].Image, d.Name)
		}
	}
}

func (c *checker) volume(where string, v *corev1.Volume) {
	mode := func(m *int32) {
		if m == nil || *m&0o027 != 0 {
			c.fail("%s: volume %s: defaultMode must be set and give others nothing, the group read at most", where, v.Name)
		}
	}
	switch {
	case v.Secret != nil:
		mode(v.Secret.DefaultMode)
	case v.Projected != nil:
		mode(v.Projected.DefaultMode)
		for _, s := range v.Projected.Sources {
			if s.Secret == nil {
				c.fail("%s: volume %s projects something other than a Secret", where, v.Name)
			}
		}
	case v.ConfigMap != nil:
		if v.ConfigMap.DefaultMode == nil || *v.ConfigMap.DefaultMode&0o222 != 0 {
			c.fail("%s: volume %s: ConfigMap defaultMode must be read-only", where, v.Name)
		}
	case v.PersistentVolumeClaim != nil:
	default:
		c.fail("%s: volume %s: only Secret, projected Secret, ConfigMap and PVC volumes are expected", where, v.Name)
	}
}

func (c *checker) container(where, role string, psc *corev1.PodSecurityContext, ct *corev1.Container, volumes map[string]*corev1.Volume) {
	where += "/" + ct.Name
	sc := ct.SecurityContext
	if sc == nil {
		c.fail("%s: no container securityContext", where)
		sc = &corev1.SecurityContext{}
	}
	if !isTrue(sc.ReadOnlyRootFilesystem) {
		c.fail("%s: readOnlyRootFilesystem must be true", where)
	}
	if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		c.fail("%s: allowPrivilegeEscalation must be false", where)
	}
	if isTrue(sc.Privileged) {
		c.fail("%s: privileged", where)
	}
	if sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) > 0 {
		c.fail("%s: capabilities must drop ALL and add none", where)
	}
	if sc.RunAsNonRoot != nil && !*sc.RunAsNonRoot {
		c.fail("%s: runAsNonRoot overridden to false", where)
	}
	if (sc.RunAsUser != nil && *sc.RunAsUser != UID) || (sc.RunAsGroup != nil && *sc.RunAsGroup != UID) {
		c.fail("%s: runs as another user or group than %d", where, UID)
	}
	if sc.SeccompProfile != nil && sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		c.fail("%s: seccompProfile overridden to %s", where, sc.SeccompProfile.Type)
	}

	// Resources: requests and limits for CPU and memory, requests within limits.
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		req, okReq := ct.Resources.Requests[r]
		lim, okLim := ct.Resources.Limits[r]
		if !okReq || !okLim || req.IsZero() || lim.IsZero() {
			c.fail("%s: %s request and limit are both required", where, r)
		} else if req.Cmp(lim) > 0 {
			c.fail("%s: %s request above its limit", where, r)
		}
	}

	// Images: the locally built ones, never pulled.
	m := imageRE.FindStringSubmatch(ct.Image)
	if m == nil {
		c.fail("%s: image %q is not a toolgate/<name>:<tag> image", where, ct.Image)
	}
	if ct.ImagePullPolicy != corev1.PullNever {
		c.fail("%s: imagePullPolicy = %q, want Never", where, ct.ImagePullPolicy)
	}
	for _, p := range ct.Ports {
		if p.HostPort != 0 || p.HostIP != "" {
			c.fail("%s: port %d is published on the host", where, p.ContainerPort)
		}
	}

	c.probes(where, role, ct)

	// Mounts: configuration and secrets read-only; only a PVC is writable.
	for _, vm := range ct.VolumeMounts {
		v := volumes[vm.Name]
		if v == nil {
			c.fail("%s: mount of unknown volume %s", where, vm.Name)
			continue
		}
		if v.PersistentVolumeClaim == nil && !vm.ReadOnly {
			c.fail("%s: mount %s of volume %s must be readOnly", where, vm.MountPath, vm.Name)
		}
		if vm.SubPath != "" || vm.SubPathExpr != "" {
			c.fail("%s: subPath mounts do not see Secret updates", where)
		}
	}

	// Secrets only as files: no env var from a Secret.
	for _, e := range ct.EnvFrom {
		if e.SecretRef != nil {
			c.fail("%s: envFrom a Secret; secrets are files under /run/secrets", where)
		}
		if e.ConfigMapRef != nil {
			c.configMapExists(where, e.ConfigMapRef.Name, isTrue(e.ConfigMapRef.Optional))
		}
	}
	for _, e := range ct.Env {
		if e.ValueFrom != nil {
			c.fail("%s: env %s takes its value from an object; secrets are files under /run/secrets", where, e.Name)
		}
	}
	// Every *_FILE setting names a file that will exist: a key of a mounted
	// Secret (or, for the pins, a path on the data volume).
	env := c.effectiveEnv(ct)
	for _, name := range sortedKeys(env) {
		value := env[name]
		if !strings.HasSuffix(name, "_FILE") {
			continue
		}
		if !strings.HasPrefix(value, "/run/secrets/") {
			// Data the process keeps (pins, tickets): on a persistent volume.
			if vm, ok := c.mountFor(ct, volumes, value); !ok || volumes[vm.Name].PersistentVolumeClaim == nil {
				c.fail("%s: %s (%s) is neither a secret file nor on a persistent volume", where, name, value)
			}
			continue
		}
		if _, err := c.secretFile(ct, volumes, value); err != nil {
			c.fail("%s: %s: %v", where, name, err)
		}
	}
	// Every Secret and ConfigMap a volume names exists, with the keys it projects.
	for _, name := range sortedKeys(volumes) {
		v := volumes[name]
		switch {
		case v.Secret != nil:
			c.secretKeys(where, v.Secret.SecretName, v.Secret.Items, isTrue(v.Secret.Optional))
		case v.Projected != nil:
			for _, s := range v.Projected.Sources {
				if s.Secret != nil {
					c.secretKeys(where, s.Secret.Name, s.Secret.Items, isTrue(s.Secret.Optional))
				}
			}
		case v.ConfigMap != nil:
			c.configMapExists(where, v.ConfigMap.Name, isTrue(v.ConfigMap.Optional))
		}
	}
}

// probes: /healthz for liveness and /readyz for readiness on the serving
// port; the policy sidecar and the demo's fakes use their image's
// healthcheck subcommand where they have no such endpoint.
func (c *checker) probes(where, role string, ct *corev1.Container) {
	httpProbe := func(kind string, p *corev1.Probe, path string) {
		if p == nil || p.HTTPGet == nil {
			c.fail("%s: %s probe must be an HTTP GET of %s", where, kind, path)
			return
		}
		if p.HTTPGet.Path != path {
			c.fail("%s: %s probe path %q, want %s", where, kind, p.HTTPGet.Path, path)
		}
		if !containerHasPort(ct, p.HTTPGet.Port) {
			c.fail("%s: %s probe port %s is not a container port", where, kind, p.HTTPGet.Port.String())
		}
		c.probeTiming(where, kind, p)
	}
	execProbe := func(kind string, p *corev1.Probe) {
		if p == nil || p.Exec == nil || !slices.Equal(p.Exec.Command, []string{"/app", "healthcheck"}) {
			c.fail("%s: %s probe must run /app healthcheck", where, kind)
			return
		}
		c.probeTiming(where, kind, p)
	}
	switch role {
	case roleGateway, roleTool:
		httpProbe("liveness", ct.LivenessProbe, "/healthz")
		httpProbe("readiness", ct.ReadinessProbe, "/readyz")
	case rolePolicy:
		execProbe("liveness", ct.LivenessProbe)
		execProbe("readiness", ct.ReadinessProbe)
	case roleFixture:
		httpProbe("liveness", ct.LivenessProbe, "/healthz")
		execProbe("readiness", ct.ReadinessProbe)
	}
}

func (c *checker) probeTiming(where, kind string, p *corev1.Probe) {
	if p.TimeoutSeconds < 1 || p.PeriodSeconds <= p.TimeoutSeconds {
		c.fail("%s: %s probe needs a timeout shorter than its period", where, kind)
	}
}

func containerHasPort(ct *corev1.Container, port intstr.IntOrString) bool {
	for _, p := range ct.Ports {
		if (port.Type == intstr.String && p.Name == port.StrVal) || (port.Type == intstr.Int && p.ContainerPort == port.IntVal) {
			return true
		}
	}
	return false
}

// effectiveEnv is the container's environment as the kubelet computes it:
// envFrom sources in order (later wins), then env with $(VAR) references
// to earlier variables expanded.
func (c *checker) effectiveEnv(ct *corev1.Container) map[string]string {
	env := map[string]string{}
	for _, e := range ct.EnvFrom {
		if e.ConfigMapRef == nil {
			continue
		}
		if cm := c.configMap(e.ConfigMapRef.Name); cm != nil {
			for k, v := range cm.Data {
				env[e.Prefix+k] = v
			}
		}
	}
	for _, e := range ct.Env {
		env[e.Name] = expand(e.Value, env)
	}
	return env
}

// expand resolves $(NAME) against the variables defined so far, leaves
// unknown references as they are and turns $$ into $, as the kubelet does.
func expand(s string, defined map[string]string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i:], ')')
			if end < 0 {
				b.WriteString(s[i:])
				return b.String()
			}
			name := s[i+2 : i+end]
			if v, ok := defined[name]; ok {
				b.WriteString(v)
			} else {
				b.WriteString(s[i : i+end+1])
			}
			i += end
		default:
			b.WriteByte('$')
		}
	}
	return b.String()
}

// mountFor finds the mount holding file.
func (c *checker) mountFor(ct *corev1.Container, volumes map[string]*corev1.Volume, file string) (corev1.VolumeMount, bool) {
	best := corev1.VolumeMount{}
	for _, vm := range ct.VolumeMounts {
		if strings.HasPrefix(file, strings.TrimSuffix(vm.MountPath, "/")+"/") && len(vm.MountPath) > len(best.MountPath) {
			best = vm
		}
	}
	return best, best.Name != "" && volumes[best.Name] != nil
}

// secretFile resolves a file path in the container to the Secret and key
// it comes from, or says why it will not exist.
func (c *checker) secretFile(ct *corev1.Container, volumes map[string]*corev1.Volume, file string) (secretKey, error) {
	if !strings.HasPrefix(file, "/run/secrets/") {
		return secretKey{}, fmt.Errorf("%s is not under /run/secrets", file)
	}
	vm, ok := c.mountFor(ct, volumes, file)
	if !ok {
		return secretKey{}, fmt.Errorf("%s is on no mounted volume", file)
	}
	rel := strings.TrimPrefix(file, strings.TrimSuffix(vm.MountPath, "/")+"/")
	v := volumes[vm.Name]
	var sk secretKey
	switch {
	case v.Secret != nil && len(v.Secret.Items) == 0:
		sk = secretKey{v.Secret.SecretName, rel}
	case v.Secret != nil:
		for _, it := range v.Secret.Items {
			if path.Clean(it.Path) == rel {
				sk = secretKey{v.Secret.SecretName, it.Key}
			}
		}
		if sk.Secret == "" {
			return secretKey{}, fmt.Errorf("%s: no item of Secret %s has path %s", file, v.Secret.SecretName, rel)
		}
	case v.Projected != nil:
		for _, s := range v.Projected.Sources {
			if s.Secret == nil {
				continue
			}
			for _, it := range s.Secret.Items {
				if path.Clean(it.Path) == rel {
					sk = secretKey{s.Secret.Name, it.Key}
				}
			}
		}
		if sk.Secret == "" {
			return secretKey{}, fmt.Errorf("%s: no projected item has path %s", file, rel)
		}
	default:
		return secretKey{}, fmt.Errorf("%s is not on a Secret volume", file)
	}
	sec := c.secret(sk.Secret)
	if sec == nil {
		return secretKey{}, fmt.Errorf("%s: Secret %s does not exist", file, sk.Secret)
	}
	if _, ok := sec.Data[sk.Key]; !ok {
		return secretKey{}, fmt.Errorf("%s: Secret %s has no key %s", file, sk.Secret, sk.Key)
	}
	return sk, nil
}

type secretKey struct{ Secret, Key string }

func (c *checker) secret(name string) *corev1.Secret {
	for i := range c.o.Secrets {
		if c.o.Secrets[i].Name == name {
			return &c.o.Secrets[i]
		}
	}
	return nil
}

func (c *checker) configMap(name string) *corev1.ConfigMap {
	for i := range c.o.ConfigMaps {
		if c.o.ConfigMaps[i].Name == name {
			return &c.o.ConfigMaps[i]
		}
	}
	return nil
}

func (c *checker) secretKeys(where, name string, items []corev1.KeyToPath, optional bool) {
	s := c.secret(name)
	if s == nil {
		if !optional {
			c.fail("%s: Secret %s does not exist (generated names end in a hash: is it generated?)", where, name)
		}
		return
	}
	if s.Type != corev1.SecretTypeOpaque {
		c.fail("%s: Secret %s has type %q, want Opaque", where, name, s.Type)
	}
	for _, it := range items {
		if _, ok := s.Data[it.Key]; !ok {
			c.fail("%s: Secret %s has no key %s", where, name, it.Key)
		}
	}
}

func (c *checker) configMapExists(where, name string, optional bool) {
	if c.configMap(name) == nil && !optional {
		c.fail("%s: ConfigMap %s does not exist", where, name)
	}
}

// services: one per workload that serves, selecting exactly that
// workload, on a port it has; nothing published outside the cluster.
func (c *checker) services() {
	for _, s := range c.o.Services {
		where := "Service/" + s.Name
		if s.Spec.Type != "" && s.Spec.Type != corev1.ServiceTypeClusterIP {
			c.fail("%s: type %s publishes toolgate outside the cluster; expose the gateway deliberately (docs/kubernetes.md)", where, s.Spec.Type)
		}
		var match []*appsv1.Deployment
		for i := range c.o.Deployments {
			d := &c.o.Deployments[i]
			if len(s.Spec.Selector) > 0 && selects(s.Spec.Selector, d.Spec.Template.Labels) {
				match = append(match, d)
			}
		}
		if len(match) != 1 {
			c.fail("%s: selects %d Deployments, want 1", where, len(match))
			continue
		}
		d := match[0]
		for _, p := range s.Spec.Ports {
			if !containerHasPort(&d.Spec.Template.Spec.Containers[0], p.TargetPort) {
				c.fail("%s: targetPort %s is not a port of %s", where, p.TargetPort.String(), d.Name)
			}
		}
		if d.Spec.Template.Labels[labelComponent] == roleTool && !s.Spec.PublishNotReadyAddresses {
			c.fail("%s: a tool service must stay reachable while its application is down (publishNotReadyAddresses)", where)
		}
	}
}

// routes: the gateway routes to exactly the tool services in the build,
// each at http://<name>:8000/mcp with a Service of that name, and presents
// the very token that service accepts — one token per service.
func (c *checker) routes() {
	var gw *corev1.Container
	var gwVolumes map[string]*corev1.Volume
	tools := map[string]*appsv1.Deployment{}
	for i := range c.o.Deployments {
		d := &c.o.Deployments[i]
		switch d.Spec.Template.Labels[labelComponent] {
		case roleGateway:
			gw = &d.Spec.Template.Spec.Containers[0]
			gwVolumes = volumeMap(d)
		case roleTool:
			tools[d.Name] = d
		}
	}
	if gw == nil {
		c.fail("no gateway Deployment")
		return
	}
	env := c.effectiveEnv(gw)
	routed := map[string]bool{}
	for _, item := range strings.Split(env["TOOLGATE_SERVICES"], ",") {
		if item = strings.TrimSpace(item); item == "" {
			continue
		}
		name, url, _ := strings.Cut(item, "=")
		if routed[name] {
			c.fail("gateway: %s routed twice", name)
		}
		routed[name] = true
		d := tools[name]
		if d == nil {
			c.fail("gateway: routes to %s (%q), which is not a tool service in this build", name, item)
			continue
		}
		if url != fmt.Sprintf("http://%s:%d/mcp", name, ServicePort) {
			c.fail("gateway: route %q, want http://%s:%d/mcp", item, name, ServicePort)
		}
		if !c.hasService(name, ServicePort, d) {
			c.fail("gateway: no Service %s on port %d for Deployment %s", name, ServicePort, name)
		}
		tokenVar := "TOOLGATE_SERVICE_TOKEN_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_")) + "_FILE"
		gwKey, err := c.secretFile(gw, gwVolumes, env[tokenVar])
		if err != nil {
			c.fail("gateway: %s: %v", tokenVar, err)
			continue
		}
		svc := &d.Spec.Template.Spec.Containers[0]
		svcKey, err := c.secretFile(svc, volumeMap(d), c.effectiveEnv(svc)["TOOLGATE_SERVICE_TOKEN_FILE"])
		if err != nil {
			c.fail("%s: TOOLGATE_SERVICE_TOKEN_FILE: %v", name, err)
			continue
		}
		if gwKey != svcKey || gwKey.Key != "service_token_"+name {
			c.fail("%s: the gateway presents %v but the service accepts %v; want service_token_%s on both sides", name, gwKey, svcKey, name)
		}
	}
	for name := range tools {
		if !routed[name] {
			c.fail("tool service %s runs but the gateway does not route to it (TOOLGATE_SERVICES)", name)
		}
	}
	if strings.Contains(env["TOOLGATE_SERVICES"], "$(") {
		c.fail("gateway: TOOLGATE_SERVICES keeps an unresolved reference: %q", env["TOOLGATE_SERVICES"])
	}
}

// policyEngine: OPA answers only with the gateway's token and keeps no
// decision log (it would put every call's arguments into the pod log), and
// the gateway presents the token the sidecar checks.
func (c *checker) policyEngine() {
	var gw, opa *appsv1.Deployment
	for i := range c.o.Deployments {
		switch c.o.Deployments[i].Spec.Template.Labels[labelComponent] {
		case roleGateway:
			gw = &c.o.Deployments[i]
		case rolePolicy:
			opa = &c.o.Deployments[i]
		}
	}
	if gw == nil || opa == nil {
		c.fail("want a gateway and a policy Deployment")
		return
	}
	ct := &opa.Spec.Template.Spec.Containers[0]
	for _, flag := range []string{"--authentication=token", "--authorization=basic"} {
		if !slices.Contains(ct.Args, flag) {
			c.fail("policy: OPA runs without %s, so anyone who reaches it may query or change it", flag)
		}
	}
	for _, a := range ct.Args {
		if strings.Contains(a, "decision_logs") {
			c.fail("policy: %s logs every call's arguments", a)
		}
	}
	gwc := &gw.Spec.Template.Spec.Containers[0]
	gwKey, err := c.secretFile(gwc, volumeMap(gw), c.effectiveEnv(gwc)["TOOLGATE_POLICY_TOKEN_FILE"])
	if err != nil {
		c.fail("gateway: TOOLGATE_POLICY_TOKEN_FILE: %v", err)
		return
	}
	opaKey, err := c.secretFile(ct, volumeMap(opa), c.effectiveEnv(ct)["TOOLGATE_POLICY_TOKEN_FILE"])
	if err != nil {
		c.fail("policy: TOOLGATE_POLICY_TOKEN_FILE: %v", err)
		return
	}
	if gwKey != opaKey {
		c.fail("policy: the gateway presents %v but the sidecar expects %v", gwKey, opaKey)
	}
}

func (c *checker) hasService(name string, port int32, d *appsv1.Deployment) bool {
	for _, s := range c.o.Services {
		if s.Name != name || !selects(s.Spec.Selector, d.Spec.Template.Labels) {
			continue
		}
		for _, p := range s.Spec.Ports {
			if p.Port == port {
				return true
			}
		}
	}
	return false
}

func (c *checker) pvcs() {
	for _, p := range c.o.PVCs {
		if !slices.Equal(p.Spec.AccessModes, []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}) {
			c.fail("PersistentVolumeClaim/%s: want ReadWriteOnce", p.Name)
		}
	}
}

func volumeMap(d *appsv1.Deployment) map[string]*corev1.Volume {
	m := map[string]*corev1.Volume{}
	for i := range d.Spec.Template.Spec.Volumes {
		m[d.Spec.Template.Spec.Volumes[i].Name] = &d.Spec.Template.Spec.Volumes[i]
	}
	return m
}

func selects(selector, labels map[string]string) bool {
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	return selects(a, b)
}

func isTrue(b *bool) bool { return b != nil && *b }

func isInt(p *int64, want int64) bool { return p != nil && *p == want }

// sortedKeys is for stable messages.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
