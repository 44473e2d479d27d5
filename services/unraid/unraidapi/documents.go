package unraidapi

// Document is one GraphQL operation the service may send. Every document
// is validated against the schema (apischema) in a test (documents_test.go),
// and that test also pins the set of mutations: nothing else is reachable.
type Document struct {
	// Name is the operation's name, sent as operationName.
	Name string
	Text string
	// Mutation marks a write (sent once, never retried).
	Mutation bool
	// Newer are the fields of Text that older unraid/api releases lack,
	// each with the release that brought it. A test checks them against
	// the schemas of older releases (apischema.SchemaOf).
	Newer []Field
}

// Field is a field of a document that older unraid/api releases lack.
type Field struct {
	// Path is the field's place in the document, by field names from the
	// operation's root: "array.disks.isSpinning".
	Path string
	// Since is the first unraid/api release whose schema has the field
	// (api/generated-schema.graphql compared across the release tags).
	Since string
	// Optional: a read answers without it when this Unraid's API lacks
	// it (Client.Query leaves it out and names it).
	Optional bool
}

// opt and req build the Newer lists: the field may be left out of the
// read, or the document needs it.
func opt(since string, paths ...string) []Field { return fields(since, true, paths) }
func req(since string, paths ...string) []Field { return fields(since, false, paths) }

func fields(since string, optional bool, paths []string) []Field {
	out := make([]Field, 0, len(paths))
	for _, p := range paths {
		out = append(out, Field{Path: p, Since: since, Optional: optional})
	}
	return out
}

func join(lists ...[]Field) []Field {
	var out []Field
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// arrayDiskFields are the fields read for every parity, data and cache
// disk. Sizes are in KB (1024 bytes), as Unraid reports them.
const arrayDiskFields = `id idx name device size status type temp numErrors fsSize fsFree fsUsed fsType isSpinning rotational color warning critical`

const notificationFields = `id title subject description importance type timestamp link`

// The queries.
var (
	Ready = Document{Name: "Ready", Text: `query Ready { info { versions { core { unraid api } } } }`,
		Newer: req("4.15.0", "info.versions.core")}

	Overview = Document{Name: "Overview", Text: `query Overview {
  info {
    time
    os { distro release kernel hostname uptime }
    cpu { manufacturer brand cores threads speed speedmax }
    system { manufacturer model }
    versions { core { unraid api } }
  }
  metrics {
    cpu { percentTotal }
    memory { total used free available percentTotal swapTotal swapUsed percentSwapTotal }
  }
  array { state capacity { kilobytes { free used total } } parityCheckStatus { status running paused progress } }
  notifications { overview { unread { info warning alert total } } }
}`, Newer: join(opt("4.14.0", "metrics"), opt("4.15.0", "info.versions.core"), opt("4.16.0", "array.parityCheckStatus"))}

	ArrayStatus = Document{Name: "ArrayStatus", Text: `query ArrayStatus {
  array {
    state
    capacity { kilobytes { free used total } disks { free used total } }
    parityCheckStatus { date duration speed status errors progress correcting paused running }
    parities { ` + arrayDiskFields + ` }
    disks { ` + arrayDiskFields + ` }
    caches { ` + arrayDiskFields + ` }
  }
}`, Newer: join(opt("4.16.0", "array.parityCheckStatus"),
		opt("4.21.0", "array.parities.isSpinning", "array.disks.isSpinning", "array.caches.isSpinning"))}

	Disks = Document{Name: "Disks", Text: `query Disks {
  disks { id device type name vendor size serialNum firmwareRevision interfaceType smartStatus temperature isSpinning partitions { name fsType size } }
}`, Newer: opt("4.21.0", "disks.isSpinning")}

	Containers = Document{Name: "Containers", Text: `query Containers {
  docker { containers { id names image state status autoStart isUpdateAvailable created ports { privatePort publicPort type } } }
}`, Newer: opt("4.21.0", "docker.containers.isUpdateAvailable")}

	ContainerLogs = Document{Name: "ContainerLogs", Text: `query ContainerLogs($id: PrefixedID!, $tail: Int, $since: DateTime) {
  docker { logs(id: $id, tail: $tail, since: $since) { containerId lines { timestamp message } cursor } }
}`, Newer: req("4.30.0", "docker.logs")}

	VMs = Document{Name: "VMs", Text: `query VMs { vms { domains { id name state } } }`, Newer: req("4.8.0", "vms.domains.id")}

	Shares = Document{Name: "Shares", Text: `query Shares {
  shares { id name free used size comment cache include exclude splitLevel allocator }
}`}

	Notifications = Document{Name: "Notifications", Text: `query Notifications($filter: NotificationFilter!) {
  notifications {
    overview { unread { info warning alert total } archive { info warning alert total } }
    list(filter: $filter) { ` + notificationFields + ` }
  }
}`}

	ParityHistory = Document{Name: "ParityHistory", Text: `query ParityHistory { parityHistory { date duration speed status errors progress correcting } }`}

	LogFiles = Document{Name: "LogFiles", Text: `query LogFiles { logFiles { name path size modifiedAt } }`}

	LogFile = Document{Name: "LogFile", Text: `query LogFile($path: String!, $lines: Int, $startLine: Int) {
  logFile(path: $path, lines: $lines, startLine: $startLine) { path content totalLines startLine }
}`}

	Network = Document{Name: "Network", Text: `query Network {
  info { networkInterfaces { name description operstate status speed mtu duplex virtual useDhcp gateway ipv4Addresses { address netmask } ipv6Addresses { address prefixLength } } }
  metrics { network { name operstate rxSec txSec receiveErrors transmitErrors receiveDropped transmitDropped utilizationPercent } }
}`, Newer: join(opt("4.14.0", "metrics"), opt("4.30.0", "info.networkInterfaces"), opt("4.35.0", "metrics.network"),
		opt("4.35.0", "info.networkInterfaces.operstate", "info.networkInterfaces.speed", "info.networkInterfaces.mtu",
			"info.networkInterfaces.duplex", "info.networkInterfaces.virtual", "info.networkInterfaces.ipv4Addresses",
			"info.networkInterfaces.ipv6Addresses"))}

	UPS = Document{Name: "UPS", Text: `query UPS {
  upsDevices { id name model status battery { chargeLevel estimatedRuntime health } power { inputVoltage outputVoltage loadPercentage nominalPower currentPower } }
}`, Newer: join(req("4.13.0", "upsDevices"), opt("4.30.0", "upsDevices.power.nominalPower", "upsDevices.power.currentPower"))}
)

// The mutations: the only writes the service can send, each behind
// UNRAID_ALLOW_WRITES and the gateway's preview → ticket → confirm.
var (
	ContainerStart       = Document{Name: "ContainerStart", Mutation: true, Text: `mutation ContainerStart($id: PrefixedID!) { docker { start(id: $id) { id names state } } }`}
	ContainerStop        = Document{Name: "ContainerStop", Mutation: true, Text: `mutation ContainerStop($id: PrefixedID!) { docker { stop(id: $id) { id names state } } }`}
	ContainerRestart     = Document{Name: "ContainerRestart", Mutation: true, Text: `mutation ContainerRestart($id: PrefixedID!) { docker { restart(id: $id) { id names state } } }`, Newer: req("4.36.0", "docker.restart")}
	VMStart              = Document{Name: "VMStart", Mutation: true, Text: `mutation VMStart($id: PrefixedID!) { vm { start(id: $id) } }`}
	VMStop               = Document{Name: "VMStop", Mutation: true, Text: `mutation VMStop($id: PrefixedID!) { vm { stop(id: $id) } }`}
	ParityStart          = Document{Name: "ParityStart", Mutation: true, Text: `mutation ParityStart($correct: Boolean!) { parityCheck { start(correct: $correct) } }`}
	ParityPause          = Document{Name: "ParityPause", Mutation: true, Text: `mutation ParityPause { parityCheck { pause } }`}
	ParityResume         = Document{Name: "ParityResume", Mutation: true, Text: `mutation ParityResume { parityCheck { resume } }`}
	ParityCancel         = Document{Name: "ParityCancel", Mutation: true, Text: `mutation ParityCancel { parityCheck { cancel } }`}
	ArchiveNotifications = Document{Name: "ArchiveNotifications", Mutation: true, Text: `mutation ArchiveNotifications($ids: [PrefixedID!]!) {
  archiveNotifications(ids: $ids) { unread { total } archive { total } }
}`}
)

// Documents lists every document the service can send.
func Documents() []Document {
	return []Document{
		Ready, Overview, ArrayStatus, Disks, Containers, ContainerLogs, VMs, Shares, Notifications,
		ParityHistory, LogFiles, LogFile, Network, UPS,
		ContainerStart, ContainerStop, ContainerRestart, VMStart, VMStop,
		ParityStart, ParityPause, ParityResume, ParityCancel, ArchiveNotifications,
	}
}

// known indexes Documents by name: Client.Do sends nothing else.
var known = func() map[string]Document {
	m := map[string]Document{}
	for _, d := range Documents() {
		m[d.Name] = d
	}
	return m
}()
