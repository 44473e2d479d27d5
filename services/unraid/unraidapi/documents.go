package unraidapi

// Document is one GraphQL operation the service may send. Every document
// is validated against the vendored schema in a test (documents_test.go),
// and that test also pins the set of mutations: nothing else is reachable.
type Document struct {
	// Name is the operation's name, sent as operationName.
	Name string
	Text string
	// Mutation marks a write (sent once, never retried).
	Mutation bool
}

// arrayDiskFields are the fields read for every parity, data and cache
// disk. Sizes are in KB (1024 bytes), as Unraid reports them.
const arrayDiskFields = `id idx name device size status type temp numErrors fsSize fsFree fsUsed fsType isSpinning rotational color warning critical`

const notificationFields = `id title subject description importance type timestamp link`

// The queries.
var (
	Ready = Document{Name: "Ready", Text: `query Ready { info { versions { core { unraid api } } } }`}

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
}`}

	ArrayStatus = Document{Name: "ArrayStatus", Text: `query ArrayStatus {
  array {
    state
    capacity { kilobytes { free used total } disks { free used total } }
    parityCheckStatus { date duration speed status errors progress correcting paused running }
    parities { ` + arrayDiskFields + ` }
    disks { ` + arrayDiskFields + ` }
    caches { ` + arrayDiskFields + ` }
  }
}`}

	Disks = Document{Name: "Disks", Text: `query Disks {
  disks { id device type name vendor size serialNum firmwareRevision interfaceType smartStatus temperature isSpinning partitions { name fsType size } }
}`}

	Containers = Document{Name: "Containers", Text: `query Containers {
  docker { containers { id names image state status autoStart isUpdateAvailable isRebuildReady created ports { privatePort publicPort type } } }
}`}

	ContainerLogs = Document{Name: "ContainerLogs", Text: `query ContainerLogs($id: PrefixedID!, $tail: Int, $since: DateTime) {
  docker { logs(id: $id, tail: $tail, since: $since) { containerId lines { timestamp message } cursor } }
}`}

	VMs = Document{Name: "VMs", Text: `query VMs { vms { domains { id name state } } }`}

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
}`}

	UPS = Document{Name: "UPS", Text: `query UPS {
  upsDevices { id name model status battery { chargeLevel estimatedRuntime health } power { inputVoltage outputVoltage loadPercentage nominalPower currentPower } }
}`}
)

// The mutations: the only writes the service can send, each behind
// UNRAID_ALLOW_WRITES and the gateway's preview → ticket → confirm.
var (
	ContainerStart       = Document{Name: "ContainerStart", Mutation: true, Text: `mutation ContainerStart($id: PrefixedID!) { docker { start(id: $id) { id names state } } }`}
	ContainerStop        = Document{Name: "ContainerStop", Mutation: true, Text: `mutation ContainerStop($id: PrefixedID!) { docker { stop(id: $id) { id names state } } }`}
	ContainerRestart     = Document{Name: "ContainerRestart", Mutation: true, Text: `mutation ContainerRestart($id: PrefixedID!) { docker { restart(id: $id) { id names state } } }`}
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
