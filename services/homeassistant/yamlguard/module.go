package yamlguard

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"

	"go.uber.org/fx"

	"github.com/toolgate/toolgate/internal/config"
	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/services/homeassistant/hass"
)

// Settings of the YAML tools.
type Settings struct {
	// ConfigDir is HA's configuration directory as mounted in the
	// container (HA_CONFIG_DIR); empty leaves the YAML tools out.
	ConfigDir string
	// Write adds the write tools (HA_YAML_WRITE, default false); the
	// directory must then be mounted writable.
	Write bool
	// BackupDir keeps a copy of each file before a change
	// (HA_YAML_BACKUP_DIR, default /data/ha-backups).
	BackupDir string
	// BackupKeep is how many copies per file are kept (HA_YAML_BACKUP_KEEP,
	// default 50).
	BackupKeep int
}

// LoadSettings reads the settings; problems are recorded in l.
func LoadSettings(l *config.Loader) Settings {
	return Settings{
		ConfigDir:  l.String("HA_CONFIG_DIR", ""),
		Write:      l.Bool("HA_YAML_WRITE", false),
		BackupDir:  l.String("HA_YAML_BACKUP_DIR", "/data/ha-backups"),
		BackupKeep: l.Int("HA_YAML_BACKUP_KEEP", 50, 1, 10000),
	}
}

// Module provides the YAML tools when HA_CONFIG_DIR is set.
var Module = fx.Module("yamlguard",
	fx.Provide(fromEnv),
	toolkit.ProvideTools(func(g *Guard) []toolkit.Tool {
		if g == nil {
			return nil
		}
		return g.Tools()
	}),
)

func fromEnv(lc fx.Lifecycle, ha *hass.Client, log *slog.Logger) (*Guard, error) {
	l := config.FromEnv()
	set := LoadSettings(l)
	if !filepath.IsAbs(set.BackupDir) {
		l.Fail("HA_YAML_BACKUP_DIR", "must be an absolute path")
	}
	var dir *Dir
	if set.ConfigDir != "" {
		var err error
		if dir, err = OpenDir(set.ConfigDir); err != nil {
			l.Fail("HA_CONFIG_DIR", "is not a directory the service can open")
		}
	}
	if err := l.Err(); err != nil {
		return nil, fmt.Errorf("configuration: %w", err)
	}
	if dir == nil {
		return nil, nil
	}
	lc.Append(fx.Hook{OnStop: func(context.Context) error { return dir.Close() }})
	return New(dir, ha, Backups{Dir: set.BackupDir, Keep: set.BackupKeep}, set.Write, log.With("component", "yamlguard")), nil
}
