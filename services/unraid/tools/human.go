package tools

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// bytesHuman renders a byte count in binary units (1 KiB = 1024 bytes), as
// an exact reading of what Unraid reports.
func bytesHuman(n int64) string {
	if n < 0 {
		return "-" + bytesHuman(-n)
	}
	const unit = 1024
	if n < unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	div, exp := int64(unit), 0
	for v := n / unit; v >= unit && exp < 5; v /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// kbHuman renders Unraid's kilobytes (1024 bytes each).
func kbHuman(kb int64) string { return bytesHuman(kb * 1024) }

// percent of part in whole, one decimal; nil when whole is zero.
func percent(part, whole int64) *float64 {
	if whole <= 0 {
		return nil
	}
	v := float64(int64(float64(part)*1000/float64(whole)+0.5)) / 10
	return &v
}

// duration renders seconds as "17h 0m 30s".
func duration(sec int64) string {
	if sec < 0 {
		sec = 0
	}
	d, h, m, s := sec/86400, sec%86400/3600, sec%3600/60, sec%60
	switch {
	case d > 0:
		return fmt.Sprintf("%dd %dh %dm", d, h, m)
	case h > 0:
		return fmt.Sprintf("%dh %dm %ds", h, m, s)
	case m > 0:
		return fmt.Sprintf("%dm %ds", m, s)
	}
	return fmt.Sprintf("%ds", s)
}

// clip bounds upstream text: at most n bytes on a rune boundary, with a
// marker when cut. Control characters other than newline and tab go.
func clip(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' || r >= 0x20 && r != 0x7f {
			return r
		}
		return -1
	}, s)
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…[cut]"
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// parseKB reads one of Unraid's capacity strings.
func parseKB(s string) int64 {
	v, _ := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	return v
}

// page bounds a list: items [offset, offset+limit) and how to go on.
type page struct {
	Total      int  `json:"total"`
	Offset     int  `json:"offset"`
	Returned   int  `json:"returned"`
	Complete   bool `json:"complete"`
	NextOffset *int `json:"next_offset,omitempty"`
}

func paginate[T any](all []T, offset, limit, def int) ([]T, page) {
	if limit <= 0 {
		limit = def
	}
	offset = max(offset, 0)
	p := page{Total: len(all), Offset: offset}
	if offset >= len(all) {
		p.Complete = true
		return []T{}, p
	}
	end := min(len(all), offset+limit)
	items := all[offset:end]
	p.Returned = len(items)
	p.Complete = end == len(all)
	if !p.Complete {
		p.NextOffset = &end
	}
	return items, p
}
