package fakehass

// DemoHome fills o with a small home: two floors, five areas, lights, a
// front door lock, a garage door, blinds, an alarm panel, a TV, a
// thermostat, sensors, automations, scripts, a scene and a to-do list.
func DemoHome(o Options) Options {
	o.Floors = []Floor{
		{ID: "ground_floor", Name: "Ground Floor", Aliases: []string{"downstairs"}},
		{ID: "first_floor", Name: "First Floor", Aliases: []string{"upstairs"}},
	}
	o.Areas = []Area{
		{ID: "living_room", Name: "Living Room", Aliases: []string{"lounge"}, Floor: "ground_floor"},
		{ID: "kitchen", Name: "Kitchen", Floor: "ground_floor"},
		{ID: "hallway", Name: "Hallway", Floor: "ground_floor"},
		{ID: "garage", Name: "Garage", Floor: "ground_floor"},
		{ID: "bedroom", Name: "Bedroom", Floor: "first_floor"},
	}
	o.Entities = []Entity{
		{ID: "light.living_room_lamp", Name: "Living Room Lamp", State: "off", Area: "living_room", Exposed: true,
			Attributes: map[string]any{"supported_color_modes": []string{"brightness"}, "brightness": nil}},
		{ID: "light.kitchen_ceiling", Name: "Kitchen Ceiling", State: "on", Area: "kitchen", Exposed: true,
			Attributes: map[string]any{"supported_color_modes": []string{"brightness"}, "brightness": 180}},
		{ID: "light.garage_light", Name: "Garage Light", State: "off", Area: "garage", Exposed: true,
			Attributes: map[string]any{"supported_color_modes": []string{"onoff"}}},
		{ID: "light.bedroom_light", Name: "Bedroom Light", State: "off", Area: "bedroom", Exposed: true,
			Attributes: map[string]any{"supported_color_modes": []string{"brightness"}}},
		{ID: "lock.front_door", Name: "Front Door", State: "locked", Area: "hallway", Aliases: []string{"Main Door"}, Exposed: true,
			Attributes: map[string]any{"supported_features": 0}},
		{ID: "cover.garage_door", Name: "Garage Door", State: "closed", Area: "garage", Exposed: true,
			Attributes: map[string]any{"device_class": "garage", "supported_features": 3}},
		{ID: "cover.living_room_blinds", Name: "Living Room Blinds", State: "open", Area: "living_room", Exposed: true,
			Attributes: map[string]any{"device_class": "blind", "current_position": 100, "supported_features": 15}},
		{ID: "alarm_control_panel.home_alarm", Name: "Home Alarm", State: "armed_away", Area: "hallway", Exposed: true,
			Attributes: map[string]any{"code_format": "number", "code_arm_required": true, "supported_features": 63}},
		{ID: "media_player.living_room_tv", Name: "Living Room TV", State: "playing", Area: "living_room", Exposed: true,
			Attributes: map[string]any{"device_class": "tv", "volume_level": 0.3, "media_title": "Nature Documentary"}},
		{ID: "climate.thermostat", Name: "Thermostat", State: "heat", Area: "hallway", Exposed: true,
			Attributes: map[string]any{"temperature": 20.5, "current_temperature": 19.8, "hvac_modes": []string{"off", "heat"}}},
		{ID: "switch.coffee_maker", Name: "Coffee Maker", State: "off", Area: "kitchen", Exposed: true,
			Attributes: map[string]any{"device_class": "outlet"}},
		{ID: "sensor.outdoor_temperature", Name: "Outdoor Temperature", State: "7.4", Exposed: true,
			Attributes: map[string]any{"device_class": "temperature", "unit_of_measurement": "°C", "state_class": "measurement"}},
		{ID: "sensor.living_room_humidity", Name: "Living Room Humidity", State: "48", Area: "living_room", Exposed: false,
			Attributes: map[string]any{"device_class": "humidity", "unit_of_measurement": "%", "state_class": "measurement"}},
		{ID: "binary_sensor.front_door_contact", Name: "Front Door Contact", State: "off", Area: "hallway", Exposed: true,
			Attributes: map[string]any{"device_class": "door"}},
		{ID: "automation.morning_lights", Name: "Morning lights", State: "on", Exposed: false,
			Attributes: map[string]any{"id": "1700000000001", "last_triggered": "2026-12-02T06:30:00.000000+00:00", "mode": "single", "current": 0}},
		{ID: "automation.close_garage_at_night", Name: "Close garage at night", State: "on", Exposed: false,
			Attributes: map[string]any{"id": "1700000000002", "last_triggered": nil, "mode": "single", "current": 0}},
		{ID: "script.good_night", Name: "Good night", State: "off", Exposed: true,
			Attributes: map[string]any{"last_triggered": "2026-12-01T22:45:00.000000+00:00", "mode": "single", "current": 0,
				"description": "Turn off the downstairs lights and lock the front door"}},
		{ID: "script.movie_mode", Name: "Movie mode", State: "off", Exposed: false,
			Attributes: map[string]any{"last_triggered": nil, "mode": "restart", "current": 0}},
		{ID: "scene.movie_time", Name: "Movie time", State: "2026-12-01T20:00:00.000000+00:00", Exposed: true,
			Attributes: map[string]any{"id": "1700000000010", "entity_id": []string{"light.living_room_lamp", "cover.living_room_blinds"}}},
		{ID: "todo.shopping_list", Name: "Shopping List", State: "2", Exposed: true,
			Attributes: map[string]any{"supported_features": 15}},
	}
	return o
}
