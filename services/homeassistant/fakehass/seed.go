package fakehass

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// DemoConfig is the demo home's configuration directory: the three files
// the YAML tools edit, configuration.yaml with includes and secrets, and a
// secrets.yaml that no tool can ever reach.
var DemoConfig = map[string]string{
	"configuration.yaml": `# Demo configuration of the fake Home Assistant.
homeassistant:
  name: Demo Home
  unit_system: metric

default_config:

# Loaded from the three files the YAML tools may edit.
automation: !include automations.yaml
script: !include scripts.yaml
scene: !include scenes.yaml

mqtt:
  broker: 192.168.1.5
  username: ha
  password: !secret mqtt_password

# Old weather integration, kept for reference:
# weather:
#   - platform: openweathermap
#     api_key: 0123-demo-openweathermap-key

http:
  use_x_forwarded_for: true
  trusted_proxies: 172.16.0.0/12
`,
	"automations.yaml": `# Managed by the UI and by toolgate's YAML tools.
- id: '1700000000001'
  alias: Morning lights
  description: Kitchen light on at 06:30 on weekdays
  trigger:
    - platform: time
      at: '06:30:00'
  condition:
    - condition: time
      weekday: [mon, tue, wed, thu, fri]
  action:
    - service: light.turn_on
      target:
        entity_id: light.kitchen_ceiling
  mode: single
- id: '1700000000002'
  alias: Close garage at night
  trigger:
    - platform: time
      at: '23:00:00'
  action:
    # Garage door: never leave it open overnight.
    - service: cover.close_cover
      target:
        entity_id: cover.garage_door
  mode: single
`,
	"scripts.yaml": `good_night:
  alias: Good night
  description: Turn off the downstairs lights and lock the front door
  sequence:
    - service: light.turn_off
      target:
        floor_id: ground_floor
    - service: lock.lock
      target:
        entity_id: lock.front_door
  mode: single
movie_mode:
  alias: Movie mode
  sequence:
    - service: scene.turn_on
      target:
        entity_id: scene.movie_time
  mode: restart
`,
	"scenes.yaml": `- id: '1700000000010'
  name: Movie time
  entities:
    light.living_room_lamp:
      state: 'on'
      brightness: 60
    cover.living_room_blinds:
      state: closed
`,
	"secrets.yaml": `# Never readable through toolgate.
mqtt_password: demo-mqtt-password-not-for-real-use
`,
}

// SeedConfig writes DemoConfig into dir, creating it, for every file that
// does not exist yet: a restarted demo keeps what the user changed.
func SeedConfig(dir string) error {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	for name, content := range DemoConfig {
		p := filepath.Join(dir, name)
		if _, err := os.Lstat(p); err == nil {
			continue
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if err := os.WriteFile(p, []byte(content), 0o640); err != nil {
			return err
		}
	}
	return nil
}
