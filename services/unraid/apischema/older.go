package apischema

import (
	"fmt"
	"slices"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
)

// Older is an unraid/api release before Version that the fake can play,
// told by what its api/generated-schema.graphql lacks that Version's has.
// Its schema is schema.graphql without those (SchemaOf).
type Older struct {
	Release string
	// Commit is the unraid/api commit the tag v<Release> names, and Blob
	// the git blob id of api/generated-schema.graphql there (what
	// `git rev-parse v<Release>:api/generated-schema.graphql` prints).
	Commit, Blob string
	// Lacks are what the release's schema lacks: "Type" (a type),
	// "Type.member" (a field of an object or input, or a value of an
	// enum) or "Type.field(argument)". They cover what the service's
	// documents reach (the fields they select, the arguments and variable
	// types they use, the enums their answers hold), and what a listed
	// type takes with it; not the rest of the schema, which nothing here
	// relies on. A test compares them with the real files where
	// /work/shared/specs has them (older_test.go).
	Lacks []string
}

// olderReleases were read from each tag's api/generated-schema.graphql,
// compared with 4.37.2's.
var olderReleases = []Older{
	{
		Release: "4.20.4", Commit: "abc22bdb8774cce06475bf669b00318fb9ed11b7", Blob: "90017c2dd29005af0f62ea34f219a07c30bb4cdb",
		Lacks: []string{
			// Spin state (4.21.0): array and physical disks.
			"ArrayDisk.isSpinning", "Disk.isSpinning",
			// Container updates (4.21.0), container logs (4.30.0), restart (4.36.0).
			"DockerContainer.isUpdateAvailable",
			"Docker.logs", "DockerContainerLogs", "DockerContainerLogLine",
			"DockerMutations.restart",
			// The network interfaces (4.30.0) and their traffic (4.35.0).
			"Info.networkInterfaces", "Info.primaryNetwork", "Query.networkInterfaces",
			"InfoNetworkInterface", "InfoNetworkIpv4Address", "InfoNetworkIpv6Address",
			"Metrics.network", "Subscription.systemMetricsNetwork", "NetworkMetrics",
			// A UPS's power (4.30.0).
			"UPSPower.nominalPower", "UPSPower.currentPower",
			// Values an answer of 4.20.4 never holds.
			"ArrayDiskType.BOOT", "ContainerState.PAUSED",
		},
	},
	{
		Release: "4.34.0", Commit: "a2d48433702d82ad31b102835a3e8c17f6c3e9b3", Blob: "9fe342c7ba509f0d42f5246f136d98c16cfdf534",
		Lacks: []string{
			// Restart came with 4.36.0.
			"DockerMutations.restart",
			// A network interface's link and addresses, and the traffic (4.35.0).
			"InfoNetworkInterface.operstate", "InfoNetworkInterface.speed", "InfoNetworkInterface.mtu",
			"InfoNetworkInterface.duplex", "InfoNetworkInterface.virtual",
			"InfoNetworkInterface.ipv4Addresses", "InfoNetworkInterface.ipv6Addresses",
			"InfoNetworkIpv4Address", "InfoNetworkIpv6Address",
			"Metrics.network", "Subscription.systemMetricsNetwork", "NetworkMetrics",
		},
	},
}

// OlderReleases returns the older releases the fake can play, oldest
// first.
func OlderReleases() []Older {
	out := slices.Clone(olderReleases)
	for i := range out {
		out[i].Lacks = slices.Clone(out[i].Lacks)
	}
	return out
}

// without removes lacks from doc. A fact that names nothing in doc is an
// error: the table is wrong, not the schema.
func without(doc *ast.SchemaDocument, lacks []string) error {
	for _, fact := range lacks {
		if err := drop(doc, fact); err != nil {
			return fmt.Errorf("lacks %q: %w", fact, err)
		}
	}
	return nil
}

func drop(doc *ast.SchemaDocument, fact string) error {
	typ, member, isMember := strings.Cut(fact, ".")
	i := slices.IndexFunc(doc.Definitions, func(d *ast.Definition) bool { return d.Name == typ })
	if i < 0 {
		return fmt.Errorf("no type %s", typ)
	}
	if !isMember {
		doc.Definitions = slices.Delete(doc.Definitions, i, i+1)
		return nil
	}
	def := doc.Definitions[i]
	field, arg, isArg := strings.Cut(member, "(")
	if isArg {
		var ok bool
		if arg, ok = strings.CutSuffix(arg, ")"); !ok {
			return fmt.Errorf("an argument is written Type.field(argument)")
		}
	}
	if def.Kind == ast.Enum {
		j := slices.IndexFunc(def.EnumValues, func(v *ast.EnumValueDefinition) bool { return v.Name == field })
		if j < 0 || isArg {
			return fmt.Errorf("no value %s of enum %s", field, typ)
		}
		def.EnumValues = slices.Delete(def.EnumValues, j, j+1)
		return nil
	}
	j := slices.IndexFunc(def.Fields, func(f *ast.FieldDefinition) bool { return f.Name == field })
	if j < 0 {
		return fmt.Errorf("no field %s of %s", field, typ)
	}
	if !isArg {
		def.Fields = slices.Delete(def.Fields, j, j+1)
		return nil
	}
	f := def.Fields[j]
	k := slices.IndexFunc(f.Arguments, func(a *ast.ArgumentDefinition) bool { return a.Name == arg })
	if k < 0 {
		return fmt.Errorf("no argument %s of %s.%s", arg, typ, field)
	}
	f.Arguments = slices.Delete(f.Arguments, k, k+1)
	return nil
}

// Has reports whether s has what fact names (written as in Older.Lacks).
func Has(s *ast.Schema, fact string) bool {
	typ, member, isMember := strings.Cut(fact, ".")
	def := s.Types[typ]
	if def == nil || !isMember {
		return def != nil
	}
	field, arg, isArg := strings.Cut(member, "(")
	if def.Kind == ast.Enum {
		return !isArg && def.EnumValues.ForName(field) != nil
	}
	f := def.Fields.ForName(field)
	if f == nil || !isArg {
		return f != nil
	}
	return f.Arguments.ForName(strings.TrimSuffix(arg, ")")) != nil
}
