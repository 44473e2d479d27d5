package fakeunraid

import (
	"fmt"
	"strings"
	"time"

	"github.com/toolgate/toolgate/services/unraid/unraidapi"
)

// Demo credentials of the demo profile; the real keys come from Unraid.
const (
	DemoServerID = "4f9c2e7a1b3d5f60"
	// Port is where the demo profile serves the fake (Unraid's web UI).
	Port = 80
)

func p[T any](v T) *T { return &v }

func pid(id string) string { return DemoServerID + ":" + id }

// DemoState is a small Unraid 7.2 server, "tower": a started array with one
// parity, three data disks and an NVMe cache, five containers (one with an
// update, one stopped), two VMs, shares, notifications, parity history and
// logs. now dates the notifications, logs and history.
func DemoState(now time.Time) *State {
	now = now.UTC().Truncate(time.Second)
	iso := func(d time.Duration) string { return now.Add(-d).Format(time.RFC3339) }
	disk := func(idx int, name, device, typ string, sizeKB int64, usedKB int64, temp float64, spinning bool) unraidapi.ArrayDisk {
		d := unraidapi.ArrayDisk{
			ID: pid(fmt.Sprintf("disk-%s", name)), Idx: idx, Name: p(name), Device: p(device), Size: unraidapi.Num{V: sizeKB, Set: true},
			Status: p("DISK_OK"), Type: typ, Temp: p(temp), NumErrors: unraidapi.Num{V: 0, Set: true}, IsSpinning: p(spinning),
			Rotational: p(!strings.HasPrefix(device, "nvme")), Color: p("GREEN_ON"),
		}
		if typ != "PARITY" {
			d.FsSize = unraidapi.Num{V: sizeKB, Set: true}
			d.FsUsed = unraidapi.Num{V: usedKB, Set: true}
			d.FsFree = unraidapi.Num{V: sizeKB - usedKB, Set: true}
			d.FsType = p("xfs")
			if typ == "CACHE" {
				d.FsType = p("btrfs")
			}
		}
		if !spinning {
			d.Temp = nil
			d.Color = p("GREEN_BLINK")
		}
		return d
	}
	const tb8, tb4 = 7814026532, 3907018532
	array := unraidapi.Array{State: "STARTED"}
	array.Parities = []unraidapi.ArrayDisk{disk(0, "parity", "sdb", "PARITY", tb8, 0, 34, true)}
	array.Disks = []unraidapi.ArrayDisk{
		disk(1, "disk1", "sdc", "DATA", tb8, 6120004400, 35, true),
		disk(2, "disk2", "sdd", "DATA", tb4, 3511000000, 47, true),
		disk(3, "disk3", "sde", "DATA", tb4, 812000000, 0, false),
	}
	array.Disks[1].NumErrors = unraidapi.Num{V: 3, Set: true}
	array.Caches = []unraidapi.ArrayDisk{disk(30, "cache", "nvme0n1", "CACHE", 976762552, 211000000, 41, true)}
	var free, used, total int64
	for _, d := range array.Disks {
		free, used, total = free+d.FsFree.V, used+d.FsUsed.V, total+d.FsSize.V
	}
	array.Capacity.Kilobytes = unraidapi.Capacity{Free: fmt.Sprint(free), Used: fmt.Sprint(used), Total: fmt.Sprint(total)}
	array.Capacity.Disks = unraidapi.Capacity{Free: "25", Used: "3", Total: "28"}
	array.ParityCheckStatus = &unraidapi.ParityCheck{Status: "COMPLETED", Running: p(false), Paused: p(false), Correcting: p(false),
		Progress: p(int64(100)), Errors: p(int64(0)), Date: p(iso(9 * 24 * time.Hour)), Duration: p(int64(61230)), Speed: p("130.6")}

	physical := func(id, dev, typ, name, vendor string, size float64, serial, iface string, temp *float64, spinning bool) unraidapi.Disk {
		return unraidapi.Disk{ID: pid(id), Device: "/dev/" + dev, Type: typ, Name: name, Vendor: vendor, Size: size, SerialNum: serial,
			FirmwareRevision: "SC60", InterfaceType: iface, SmartStatus: "OK", Temperature: temp, IsSpinning: p(spinning),
			Partitions: []struct {
				Name   string  `json:"name"`
				FsType string  `json:"fsType"`
				Size   float64 `json:"size"`
			}{{Name: dev + "1", FsType: "XFS", Size: size - 1048576}}}
	}
	disks := []unraidapi.Disk{
		physical("WDC_WD80EFZZ-68BTXN0_WD-CA1PARITY", "sdb", "HDD", "WDC WD80EFZZ-68BTXN0", "Western Digital", 8001563222016, "WD-CA1PARITY", "SATA", p(34.0), true),
		physical("WDC_WD80EFZZ-68BTXN0_WD-CA1DISK1", "sdc", "HDD", "WDC WD80EFZZ-68BTXN0", "Western Digital", 8001563222016, "WD-CA1DISK1", "SATA", p(35.0), true),
		physical("ST4000VN008-2DR166_ZDH1DISK2", "sdd", "HDD", "ST4000VN008-2DR166", "Seagate", 4000787030016, "ZDH1DISK2", "SATA", p(47.0), true),
		physical("ST4000VN008-2DR166_ZDH1DISK3", "sde", "HDD", "ST4000VN008-2DR166", "Seagate", 4000787030016, "ZDH1DISK3", "SATA", nil, false),
		physical("Samsung_SSD_980_1TB_S64ANS0CACHE", "nvme0n1", "SSD", "Samsung SSD 980 1TB", "Samsung", 1000204886016, "S64ANS0CACHE", "PCIE", p(41.0), true),
	}

	ctr := func(id, name, image, state, status string, auto, update bool, created time.Duration) unraidapi.Container {
		c := unraidapi.Container{ID: pid(id), Names: []string{"/" + name}, Image: image, State: state, Status: status, AutoStart: auto,
			IsUpdateAvailable: p(update), Created: now.Add(-created).Unix()}
		c.Ports = []struct {
			PrivatePort *int   `json:"privatePort"`
			PublicPort  *int   `json:"publicPort"`
			Type        string `json:"type"`
		}{}
		return c
	}
	containers := []unraidapi.Container{
		ctr("1f0e5d2c9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d", "plex", "plexinc/pms-docker:latest", "RUNNING", "Up 6 days", true, true, 40*24*time.Hour),
		ctr("2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b", "sonarr", "lscr.io/linuxserver/sonarr:latest", "RUNNING", "Up 6 days (healthy)", true, false, 30*24*time.Hour),
		ctr("3b2c1d0e9f8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c", "radarr", "lscr.io/linuxserver/radarr:latest", "RUNNING", "Up 6 days (healthy)", true, false, 30*24*time.Hour),
		ctr("4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d", "homeassistant", "ghcr.io/home-assistant/home-assistant:stable", "RUNNING", "Up 2 days", true, false, 90*24*time.Hour),
		ctr("5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e", "nextcloud", "lscr.io/linuxserver/nextcloud:latest", "EXITED", "Exited (137) 3 hours ago", false, false, 120*24*time.Hour),
	}
	containers[0].Ports = []struct {
		PrivatePort *int   `json:"privatePort"`
		PublicPort  *int   `json:"publicPort"`
		Type        string `json:"type"`
	}{{PrivatePort: p(32400), PublicPort: p(32400), Type: "TCP"}}
	logs := map[string][]LogLine{}
	for i, c := range containers {
		id := strip(c.ID)
		for j := 0; j < 40; j++ {
			logs[id] = append(logs[id], LogLine{Timestamp: now.Add(-time.Duration(40-j) * time.Minute), Message: fmt.Sprintf("[%s] worker %d: request handled in %d ms", strings.TrimPrefix(c.Names[0], "/"), j%4, 10+i*3+j)})
		}
	}
	nc := strip(containers[4].ID)
	logs[nc] = append(logs[nc], LogLine{Timestamp: now.Add(-3 * time.Hour), Message: "PHP Fatal error:  Allowed memory size of 536870912 bytes exhausted"})

	kb := func(v int64) unraidapi.Num { return unraidapi.Num{V: v, Set: true} }
	share := func(name, comment string, free, used int64, cache bool) unraidapi.Share {
		return unraidapi.Share{ID: pid("share-" + name), Name: p(name), Free: kb(free), Used: kb(used), Size: kb(0), Comment: p(comment),
			Cache: p(cache), Include: []string{}, Exclude: []string{}, SplitLevel: p(""), Allocator: p("highwater")}
	}

	note := func(id, title, subject, desc, imp, typ string, ago time.Duration) unraidapi.Notification {
		return unraidapi.Notification{ID: pid(id), Title: title, Subject: subject, Description: desc, Importance: imp, Type: typ, Timestamp: p(iso(ago))}
	}
	history := []unraidapi.ParityCheck{
		{Date: p(iso(9 * 24 * time.Hour)), Duration: p(int64(61230)), Speed: p("130.6"), Status: "COMPLETED", Errors: p(int64(0)), Progress: p(int64(100)), Correcting: p(false)},
		{Date: p(iso(39 * 24 * time.Hour)), Duration: p(int64(60944)), Speed: p("131.2"), Status: "COMPLETED", Errors: p(int64(0)), Progress: p(int64(100)), Correcting: p(false)},
		{Date: p(iso(69 * 24 * time.Hour)), Duration: p(int64(2233)), Speed: p("0"), Status: "CANCELLED", Errors: p(int64(0)), Progress: p(int64(3)), Correcting: p(false)},
	}

	var syslog strings.Builder
	for i := 0; i < 300; i++ {
		fmt.Fprintf(&syslog, "%s tower kernel: md: sync done. time=%ds\n", now.Add(-time.Duration(300-i)*time.Minute).Format(time.Stamp), 61230+i)
	}
	syslog.WriteString(now.Add(-2*time.Minute).Format(time.Stamp) + " tower kernel: ata4.00: failed command: READ FPDMA QUEUED\n")

	return &State{
		ServerID: DemoServerID,
		Info: map[string]any{
			"time":     now.Format(time.RFC3339),
			"os":       map[string]any{"distro": "Unraid OS", "release": "7.2.0", "kernel": "6.12.24-Unraid", "hostname": "tower", "uptime": iso(6*24*time.Hour + 3*time.Hour)},
			"cpu":      map[string]any{"manufacturer": "Intel", "brand": "Core i5-12400", "cores": 6, "threads": 12, "speed": 2.5, "speedmax": 4.4},
			"system":   map[string]any{"manufacturer": "ASRock", "model": "B660M Pro RS"},
			"versions": map[string]any{"core": map[string]any{"unraid": "7.2.0", "api": "4.37.2", "kernel": "6.12.24-Unraid"}},
			"networkInterfaces": []any{
				map[string]any{"name": "eth0", "description": "Intel I219-V", "operstate": "up", "status": "connected", "speed": 1000, "mtu": 1500, "duplex": "full",
					"virtual": false, "useDhcp": false, "gateway": "192.168.1.1", "ipv4Addresses": []any{}, "ipv6Addresses": []any{}},
				map[string]any{"name": "br0", "description": "bridge", "operstate": "up", "status": "connected", "speed": 1000, "mtu": 1500, "duplex": "full",
					"virtual": true, "useDhcp": false, "gateway": "192.168.1.1",
					"ipv4Addresses": []any{map[string]any{"address": "192.168.1.10", "netmask": "255.255.255.0"}},
					"ipv6Addresses": []any{map[string]any{"address": "fe80::1c2b:3aff:fe4d:5e6f", "prefixLength": 64}}},
			},
		},
		Metrics: map[string]any{
			"cpu": map[string]any{"percentTotal": 7.4},
			"memory": map[string]any{"total": int64(34359738368), "used": int64(12884901888), "free": int64(2147483648), "available": int64(21474836480),
				"percentTotal": 37.5, "swapTotal": 0, "swapUsed": 0, "percentSwapTotal": 0},
			"network": []any{
				map[string]any{"name": "br0", "operstate": "up", "rxSec": 812345.5, "txSec": 120034.1, "receiveErrors": 0, "transmitErrors": 0,
					"receiveDropped": 12, "transmitDropped": 0, "utilizationPercent": 0.7},
			},
		},
		UPS: []any{map[string]any{"id": "ups0", "name": "Back-UPS", "model": "APC Back-UPS Pro 900", "status": "Online",
			"battery": map[string]any{"chargeLevel": 100, "estimatedRuntime": 2520, "health": "Good"},
			"power":   map[string]any{"inputVoltage": 231.0, "outputVoltage": 231.0, "loadPercentage": 18, "nominalPower": 540, "currentPower": 97.2}}},
		Array:         array,
		Disks:         disks,
		Containers:    containers,
		ContainerLogs: logs,
		VMs: []unraidapi.VM{
			{ID: pid("8d2f7c1e-3b4a-4c5d-9e6f-0a1b2c3d4e5f"), Name: p("Windows 11"), State: "SHUTOFF"},
			{ID: pid("6a5b4c3d-2e1f-4a0b-9c8d-7e6f5a4b3c2d"), Name: p("pfSense-lab"), State: "RUNNING"},
		},
		Shares: []unraidapi.Share{
			share("appdata", "application data", 765762552, 211000000, true),
			share("media", "movies and TV", 5270026664, 10443004400, false),
			share("isos", "", 5270026664, 41000000, false),
			share("system", "docker and libvirt images", 765762552, 62000000, true),
		},
		Notifications: []unraidapi.Notification{
			note("1733206800-docker-update", "Docker", "Update available", "An update is available for plex", "INFO", "UNREAD", 5*time.Hour),
			note("1733200000-disk2-temp", "Unraid Disk 2 temperature", "Warning [TOWER] - Disk 2 is hot (47 C)", "ST4000VN008-2DR166_ZDH1DISK2 (sdd)", "WARNING", "UNREAD", 7*time.Hour),
			note("1733100000-disk2-errors", "Unraid Disk 2 error", "Alert [TOWER] - Disk 2 has read errors", "ST4000VN008-2DR166_ZDH1DISK2 (sdd): 3 errors", "ALERT", "UNREAD", 30*time.Hour),
			note("1732400000-parity", "Parity check", "Notice [TOWER] - Parity check finished (0 errors)", "Duration: 17 hours, 0 minutes, 30 seconds. Average speed: 130.6 MB/s", "INFO", "UNREAD", 9*24*time.Hour),
			note("1730000000-array", "Array", "Notice [TOWER] - array health report [PASS]", "Array has 4 disks (including parity & pools)", "INFO", "ARCHIVE", 40*24*time.Hour),
		},
		ParityHistory: history,
		LogFiles: []unraidapi.LogFileInfo{
			{Name: "syslog", Path: "/var/log/syslog", Size: int64(syslog.Len()), ModifiedAt: iso(2 * time.Minute)},
			{Name: "dmesg", Path: "/var/log/dmesg", Size: 61234, ModifiedAt: iso(6 * 24 * time.Hour)},
			{Name: "docker.log", Path: "/var/log/docker.log", Size: 8123, ModifiedAt: iso(3 * time.Hour)},
			{Name: "btmp", Path: "/var/log/btmp", Size: 0, ModifiedAt: iso(6 * 24 * time.Hour)},
			{Name: "wtmp", Path: "/var/log/wtmp", Size: 3456, ModifiedAt: iso(6 * 24 * time.Hour)},
		},
		LogContent: map[string]string{
			"syslog":     syslog.String(),
			"dmesg":      "[    0.000000] Linux version 6.12.24-Unraid\n[    1.234567] ata4: SATA link up 6.0 Gbps\n",
			"docker.log": "time=\"" + iso(3*time.Hour) + "\" level=info msg=\"Container nextcloud exited\"\n",
			"wtmp":       "\x00\x00binary\x00",
		},
	}
}
