package unraidapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// Num is a GraphQL BigInt: Unraid sends it as a JSON number, or as a
// string when it is beyond JavaScript's safe integers. Set is false for null.
type Num struct {
	V   int64
	Set bool
}

// UnmarshalJSON accepts a number, a numeric string or null.
func (n *Num) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		*n = Num{}
		return nil
	}
	s := string(bytes.Trim(b, `"`))
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		f, ferr := strconv.ParseFloat(s, 64)
		if ferr != nil {
			return fmt.Errorf("not a BigInt: %.40s", s)
		}
		v = int64(f)
	}
	*n = Num{V: v, Set: true}
	return nil
}

// MarshalJSON writes the number, or null.
func (n Num) MarshalJSON() ([]byte, error) {
	if !n.Set {
		return []byte("null"), nil
	}
	return strconv.AppendInt(nil, n.V, 10), nil
}

// Ptr returns the value, nil for null.
func (n Num) Ptr() *int64 {
	if !n.Set {
		return nil
	}
	v := n.V
	return &v
}

// Capacity is Unraid's free/used/total triple; the values are strings.
type Capacity struct {
	Free  string `json:"free"`
	Used  string `json:"used"`
	Total string `json:"total"`
}

// ParityCheck is a running check's status or one history entry.
type ParityCheck struct {
	Date       *string `json:"date"`
	Duration   *int64  `json:"duration"` // seconds
	Speed      *string `json:"speed"`    // MB/s
	Status     string  `json:"status"`
	Errors     *int64  `json:"errors"`
	Progress   *int64  `json:"progress"` // percent
	Correcting *bool   `json:"correcting"`
	Paused     *bool   `json:"paused"`
	Running    *bool   `json:"running"`
}

// ArrayDisk is a parity, data or cache slot. Sizes in KB.
type ArrayDisk struct {
	ID         string   `json:"id"`
	Idx        int      `json:"idx"`
	Name       *string  `json:"name"`
	Device     *string  `json:"device"`
	Size       Num      `json:"size"`
	Status     *string  `json:"status"`
	Type       string   `json:"type"`
	Temp       *float64 `json:"temp"`
	NumErrors  Num      `json:"numErrors"`
	FsSize     Num      `json:"fsSize"`
	FsFree     Num      `json:"fsFree"`
	FsUsed     Num      `json:"fsUsed"`
	FsType     *string  `json:"fsType"`
	IsSpinning *bool    `json:"isSpinning"`
	Rotational *bool    `json:"rotational"`
	Color      *string  `json:"color"`
	Warning    *int     `json:"warning"`
	Critical   *int     `json:"critical"`
}

// Array is the answer to ArrayStatus (and a part of Overview).
type Array struct {
	State    string `json:"state"`
	Capacity struct {
		Kilobytes Capacity `json:"kilobytes"`
		Disks     Capacity `json:"disks"`
	} `json:"capacity"`
	// ParityCheckStatus is nil when this Unraid's API lacks it (< 4.16.0).
	ParityCheckStatus *ParityCheck `json:"parityCheckStatus"`
	Parities          []ArrayDisk  `json:"parities"`
	Disks             []ArrayDisk  `json:"disks"`
	Caches            []ArrayDisk  `json:"caches"`
}

// NotificationCounts counts notifications by importance.
type NotificationCounts struct {
	Info    int `json:"info"`
	Warning int `json:"warning"`
	Alert   int `json:"alert"`
	Total   int `json:"total"`
}

// NotificationOverview is unread and archived counts.
type NotificationOverview struct {
	Unread  NotificationCounts `json:"unread"`
	Archive NotificationCounts `json:"archive"`
}

// OverviewData is the answer to Overview.
type OverviewData struct {
	Info struct {
		Time string `json:"time"`
		OS   struct {
			Distro   *string `json:"distro"`
			Release  *string `json:"release"`
			Kernel   *string `json:"kernel"`
			Hostname *string `json:"hostname"`
			Uptime   *string `json:"uptime"` // boot time, ISO
		} `json:"os"`
		CPU struct {
			Manufacturer *string  `json:"manufacturer"`
			Brand        *string  `json:"brand"`
			Cores        *int     `json:"cores"`
			Threads      *int     `json:"threads"`
			Speed        *float64 `json:"speed"`
			SpeedMax     *float64 `json:"speedmax"`
		} `json:"cpu"`
		System struct {
			Manufacturer *string `json:"manufacturer"`
			Model        *string `json:"model"`
		} `json:"system"`
		Versions Versions `json:"versions"`
	} `json:"info"`
	Metrics struct {
		CPU *struct {
			PercentTotal float64 `json:"percentTotal"`
		} `json:"cpu"`
		Memory *struct {
			Total            Num     `json:"total"`
			Used             Num     `json:"used"`
			Free             Num     `json:"free"`
			Available        Num     `json:"available"`
			PercentTotal     float64 `json:"percentTotal"`
			SwapTotal        Num     `json:"swapTotal"`
			SwapUsed         Num     `json:"swapUsed"`
			PercentSwapTotal float64 `json:"percentSwapTotal"`
		} `json:"memory"`
	} `json:"metrics"`
	Array         Array `json:"array"`
	Notifications struct {
		Overview NotificationOverview `json:"overview"`
	} `json:"notifications"`
}

// Versions are Unraid's and its API's versions.
type Versions struct {
	Core struct {
		Unraid *string `json:"unraid"`
		API    *string `json:"api"`
	} `json:"core"`
}

// ReadyData is the answer to Ready.
type ReadyData struct {
	Info struct {
		Versions Versions `json:"versions"`
	} `json:"info"`
}

// Disk is a physical disk; size in bytes.
type Disk struct {
	ID               string   `json:"id"`
	Device           string   `json:"device"`
	Type             string   `json:"type"`
	Name             string   `json:"name"`
	Vendor           string   `json:"vendor"`
	Size             float64  `json:"size"`
	SerialNum        string   `json:"serialNum"`
	FirmwareRevision string   `json:"firmwareRevision"`
	InterfaceType    string   `json:"interfaceType"`
	SmartStatus      string   `json:"smartStatus"`
	Temperature      *float64 `json:"temperature"`
	IsSpinning       *bool    `json:"isSpinning"`
	Partitions       []struct {
		Name   string  `json:"name"`
		FsType string  `json:"fsType"`
		Size   float64 `json:"size"`
	} `json:"partitions"`
}

// Container is a Docker container.
type Container struct {
	ID                string   `json:"id"`
	Names             []string `json:"names"`
	Image             string   `json:"image"`
	State             string   `json:"state"`
	Status            string   `json:"status"`
	AutoStart         bool     `json:"autoStart"`
	IsUpdateAvailable *bool    `json:"isUpdateAvailable"`
	Created           int64    `json:"created"`
	Ports             []struct {
		PrivatePort *int   `json:"privatePort"`
		PublicPort  *int   `json:"publicPort"`
		Type        string `json:"type"`
	} `json:"ports"`
}

// ContainersData is the answer to Containers.
type ContainersData struct {
	Docker struct {
		Containers []Container `json:"containers"`
	} `json:"docker"`
}

// LogsData is the answer to ContainerLogs.
type LogsData struct {
	Docker struct {
		Logs struct {
			ContainerID string `json:"containerId"`
			Lines       []struct {
				Timestamp string `json:"timestamp"`
				Message   string `json:"message"`
			} `json:"lines"`
			Cursor *string `json:"cursor"`
		} `json:"logs"`
	} `json:"docker"`
}

// VM is a virtual machine.
type VM struct {
	ID    string  `json:"id"`
	Name  *string `json:"name"`
	State string  `json:"state"`
}

// VMsData is the answer to VMs.
type VMsData struct {
	VMs struct {
		Domains []VM `json:"domains"`
	} `json:"vms"`
}

// Share is a user share; sizes in KB.
type Share struct {
	ID         string   `json:"id"`
	Name       *string  `json:"name"`
	Free       Num      `json:"free"`
	Used       Num      `json:"used"`
	Size       Num      `json:"size"`
	Comment    *string  `json:"comment"`
	Cache      *bool    `json:"cache"`
	Include    []string `json:"include"`
	Exclude    []string `json:"exclude"`
	SplitLevel *string  `json:"splitLevel"`
	Allocator  *string  `json:"allocator"`
}

// Notification is one Unraid notification.
type Notification struct {
	ID          string  `json:"id"`
	Title       string  `json:"title"`
	Subject     string  `json:"subject"`
	Description string  `json:"description"`
	Importance  string  `json:"importance"`
	Type        string  `json:"type"`
	Timestamp   *string `json:"timestamp"`
	Link        *string `json:"link"`
}

// NotificationsData is the answer to Notifications.
type NotificationsData struct {
	Notifications struct {
		Overview NotificationOverview `json:"overview"`
		List     []Notification       `json:"list"`
	} `json:"notifications"`
}

// LogFileInfo is one file in Unraid's log directory; size in bytes.
type LogFileInfo struct {
	Name       string `json:"name"`
	Path       string `json:"path"`
	Size       int64  `json:"size"`
	ModifiedAt string `json:"modifiedAt"`
}

// LogFileContent is a window of a log file.
type LogFileContent struct {
	Path       string `json:"path"`
	Content    string `json:"content"`
	TotalLines int    `json:"totalLines"`
	StartLine  *int   `json:"startLine"`
}

// NetworkData is the answer to Network.
type NetworkData struct {
	Info struct {
		NetworkInterfaces []struct {
			Name          string  `json:"name"`
			Description   *string `json:"description"`
			Operstate     *string `json:"operstate"`
			Status        *string `json:"status"`
			Speed         *int    `json:"speed"`
			MTU           *int    `json:"mtu"`
			Duplex        *string `json:"duplex"`
			Virtual       *bool   `json:"virtual"`
			UseDhcp       *bool   `json:"useDhcp"`
			Gateway       *string `json:"gateway"`
			IPv4Addresses []struct {
				Address string `json:"address"`
				Netmask string `json:"netmask"`
			} `json:"ipv4Addresses"`
			IPv6Addresses []struct {
				Address      string `json:"address"`
				PrefixLength *int   `json:"prefixLength"`
			} `json:"ipv6Addresses"`
		} `json:"networkInterfaces"`
	} `json:"info"`
	Metrics struct {
		Network []struct {
			Name               string   `json:"name"`
			Operstate          *string  `json:"operstate"`
			RxSec              float64  `json:"rxSec"`
			TxSec              float64  `json:"txSec"`
			ReceiveErrors      Num      `json:"receiveErrors"`
			TransmitErrors     Num      `json:"transmitErrors"`
			ReceiveDropped     Num      `json:"receiveDropped"`
			TransmitDropped    Num      `json:"transmitDropped"`
			UtilizationPercent *float64 `json:"utilizationPercent"`
		} `json:"network"`
	} `json:"metrics"`
}

// UPSDevice is one UPS.
type UPSDevice struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Model   string `json:"model"`
	Status  string `json:"status"`
	Battery struct {
		ChargeLevel      int    `json:"chargeLevel"`
		EstimatedRuntime int    `json:"estimatedRuntime"` // seconds
		Health           string `json:"health"`
	} `json:"battery"`
	Power struct {
		InputVoltage   float64  `json:"inputVoltage"`
		OutputVoltage  float64  `json:"outputVoltage"`
		LoadPercentage int      `json:"loadPercentage"`
		NominalPower   *int     `json:"nominalPower"`
		CurrentPower   *float64 `json:"currentPower"`
	} `json:"power"`
}

// compile-time: Num round-trips through encoding/json.
var _ json.Unmarshaler = (*Num)(nil)
