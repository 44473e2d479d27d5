// Package masktest holds configuration fragments with planted
// credentials, for the tests of the mask package and of the YAML tools.
package masktest

// Fragment is a piece of configuration.yaml shaped like Home Assistant's
// documentation writes it (or as an attacker would spell it), with the
// credentials planted in it and text that must stay readable.
type Fragment struct {
	Name, YAML string
	Secrets    []string
	Keep       []string
}

// Fragments are read by the mask tests and by the YAML tools' tests,
// which plant each in a configuration.yaml and search for every secret.
var Fragments = []Fragment{
	// Shapes from Home Assistant's documentation.
	{Name: "manual alarm panel code", YAML: `
alarm_control_panel:
  - platform: manual
    name: Home Alarm
    code: 4711
    arming_time: 30
    delay_time: 20
    trigger_time: 4
    disarmed:
      trigger_time: 0
`, Secrets: []string{"4711"}, Keep: []string{"name: Home Alarm", "arming_time: 30", "trigger_time: 0"}},
	{Name: "manual alarm panel code template", YAML: `
alarm_control_panel:
  - platform: manual
    code_template: >-
      {% if from_state == 'disarmed' %}8246{% else %}9357{% endif %}
    arming_time: 10
`, Secrets: []string{"8246", "9357"}, Keep: []string{"arming_time: 10"}},
	{Name: "disarm code in an automation", YAML: `
- id: '1700000000100'
  alias: Disarm when home
  actions:
    - action: alarm_control_panel.alarm_disarm
      target:
        entity_id: alarm_control_panel.home_alarm
      data:
        code: "5813"
`, Secrets: []string{"5813"}, Keep: []string{"entity_id: alarm_control_panel.home_alarm"}},
	{Name: "shell_command with curl -u", YAML: `
shell_command:
  restart_pow: touch ~/.pow/restart.txt
  call_remote: curl -u admin:curl-Pass-21 http://example.com/ping
  call_long: curl --user admin:curl-Pass-22 --silent http://nas.lan/x
  call_eq: 'curl --user=admin:curl-Pass-23 http://nas.lan/y'
  call_attached: curl -uadmin:curl-Pass-24 http://nas.lan/z
  smb: smbclient //nas/share -U admin%smb-Pass-25 -c ls
`, Secrets: []string{"curl-Pass-21", "curl-Pass-22", "curl-Pass-23", "curl-Pass-24", "smb-Pass-25"},
		Keep: []string{"restart_pow: touch ~/.pow/restart.txt", "http://example.com/ping"}},
	{Name: "command line passwords of other tools", YAML: `
shell_command:
  backup_db: mysqldump -u ha -pMy-Sql-Pass-31 homeassistant > /config/db.sql
  copy: sshpass -p Ssh-Pass-32 scp /config/db.sql nas:/backup
  pub: mosquitto_pub -h broker -u ha -P Mqtt-Pass-33 -t x -m y
  dl: wget --http-password Wget-Pass-34 http://nas.lan/f
  cache: redis-cli -a Redis-Pass-35 FLUSHALL
`, Secrets: []string{"My-Sql-Pass-31", "Ssh-Pass-32", "Mqtt-Pass-33", "Wget-Pass-34", "Redis-Pass-35"},
		Keep: []string{"mosquitto_pub -h broker -u ha -P"}},
	{Name: "rest sensor with a password and headers", YAML: `
sensor:
  - platform: rest
    resource: http://192.168.1.12:5000/sensor
    username: ha1
    password: Rest-Pass-41
    authentication: basic
    headers:
      User-Agent: Home Assistant
      Content-Type: application/json
      X-Auth: Rest-Header-42
      X-Custom-Line: Rest-Header-43
`, Secrets: []string{"Rest-Pass-41", "Rest-Header-42", "Rest-Header-43"},
		Keep: []string{"username: ha1", "User-Agent: Home Assistant", "Content-Type: application/json", "authentication: basic"}},
	{Name: "rest_command with an Authorization header", YAML: `
rest_command:
  my_request:
    url: https://slack.com/api/users.profile.set
    method: POST
    headers:
      authorization: "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.Rest-Cmd-Sig-51"
      accept: "application/json, text/html"
      user-agent: 'Mozilla/5.0 {{ useragent }}'
    payload: '{"profile":{"status_text": "{{ status }}","token": "Rest-Cmd-Token-52"}}'
    content_type:  'application/json; charset=utf-8'
`, Secrets: []string{"Rest-Cmd-Sig-51", "eyJzdWIiOiIxIn0", "Rest-Cmd-Token-52"},
		Keep: []string{`accept: "application/json, text/html"`, "user-agent: 'Mozilla/5.0 {{ useragent }}'", "content_type:"}},
	{Name: "secret names", YAML: `
http:
  api_password: !secret http_password_name_61
mqtt:
  password: !secret  "mqtt password name 62"
`, Secrets: []string{"http_password_name_61", "mqtt password name 62"}, Keep: []string{"!secret ***"}},
	{Name: "env_var defaults", YAML: `
example: !env_var PASSWORD Env-Default-71
db_url: !env_var DB_URL mysql://ha:Env-Default-72@core-mariadb/ha
other: !env_var  TOKEN   Env Default 73   # the fallback
no_default: !env_var ONLY_NAME
`, Secrets: []string{"Env-Default-71", "Env-Default-72", "Env Default 73"},
		Keep: []string{"!env_var PASSWORD", "!env_var DB_URL", "!env_var  TOKEN", "# the fallback", "!env_var ONLY_NAME"}},
	{Name: "private key as a block scalar", YAML: `
notify:
  - name: sftp
    platform: custom
    private_key: |
      -----BEGIN OPENSSH PRIVATE KEY-----
      b3BlbnNzaC1rZXktdjEAAAAABG5vbmUtBlock-Key-81
      -----END OPENSSH PRIVATE KEY-----
    host: nas.lan
`, Secrets: []string{"BEGIN OPENSSH", "Block-Key-81", "END OPENSSH"}, Keep: []string{"host: nas.lan", "name: sftp"}},
	{Name: "block scalars with chomping and indentation indicators", YAML: `
a:
  password: |-
    Block-Pass-82
  token: >+2
     Block-Token-83

  secret: >-   # folded
    Block-Secret-84
    more-84b
  after: visible
`, Secrets: []string{"Block-Pass-82", "Block-Token-83", "Block-Secret-84", "more-84b"}, Keep: []string{"after: visible"}},
	{Name: "value on the line after its key", YAML: `
mqtt:
  password:
    Next-Line-91
  api_key:
    "Next-Line-92"
  token: # set below
    Next-Line-93
  broker: core-mosquitto
`, Secrets: []string{"Next-Line-91", "Next-Line-92", "Next-Line-93"}, Keep: []string{"broker: core-mosquitto"}},
	{Name: "plain scalar continued on deeper lines", YAML: `
mqtt:
  password: Cont-First-101
    Cont-Second-102
  port: 1883
`, Secrets: []string{"Cont-First-101", "Cont-Second-102"}, Keep: []string{"port: 1883"}},
	{Name: "quoted value over several lines", YAML: `
mqtt:
  password: "Multi-Line-111
    Multi-Line-112"
  token: 'it''s Multi-Line-113 #not a comment'
  port: 1883
`, Secrets: []string{"Multi-Line-111", "Multi-Line-112", "Multi-Line-113", "not a comment"}, Keep: []string{"port: 1883"}},

	// Further spellings.
	{Name: "flow mappings", YAML: `
mqtt: {username: ha, password: Flow-Pass-121, port: 1883}
other: { "api_key" : "Flow-Key-122,with comma", name: x }
nested: {creds: {token: [Flow-Tok-123, Flow-Tok-124]}, keep: yes}
`, Secrets: []string{"Flow-Pass-121", "Flow-Key-122", "with comma", "Flow-Tok-123", "Flow-Tok-124"},
		Keep: []string{"username: ha", "port: 1883}", "name: x }", "keep: yes}"}},
	{Name: "quoted and odd keys", YAML: `
"password": Quoted-Key-131
'api_key': Quoted-Key-132
"db password" : Quoted-Key-133
PASSWORD: Quoted-Key-134
"pass\u0077ord": Escaped-Key-135
? "pa\
  ssword"
: Escaped-Key-136
`, Secrets: []string{"Quoted-Key-131", "Quoted-Key-132", "Quoted-Key-133", "Quoted-Key-134", "Escaped-Key-135", "Escaped-Key-136"}},
	{Name: "anchors and aliases", YAML: `
base: &mqtt_pw Anchor-Pass-141
mqtt:
  password: *mqtt_pw
defaults: &creds
  user: ha
  token: Anchor-Token-142
service:
  <<: *creds
list:
  - &k Anchor-Item-143
  - plain
sensor:
  api_key: *k
shown: &plain not-secret
reused: *plain
`, Secrets: []string{"Anchor-Pass-141", "Anchor-Token-142", "Anchor-Item-143"}, Keep: []string{"shown: &plain not-secret", "- plain", "user: ha"}},
	{Name: "alias as a key", YAML: `
k: &keyname password
map:
  *keyname : Alias-Key-151
`, Secrets: []string{"Alias-Key-151"}},
	{Name: "explicit and multi-line keys", YAML: `
? password
: Explicit-Key-161
? |
  api_key
: Explicit-Key-162
? [a, b]
: not-secret-163
`, Secrets: []string{"Explicit-Key-161", "Explicit-Key-162"}, Keep: []string{"not-secret-163"}},
	{Name: "list items", YAML: `
logins:
  - password: List-Pass-171
  - user: bob
    password: List-Pass-172
  -   {token: List-Tok-173}
tokens:
- name: a
  token:
  - List-Tok-174
  - List-Tok-175
- name: b
`, Secrets: []string{"List-Pass-171", "List-Pass-172", "List-Tok-173", "List-Tok-174", "List-Tok-175"}, Keep: []string{"user: bob", "- name: b", "- name: a"}},
	{Name: "comments", YAML: `
# password: Comment-Pass-181
#password: Comment-Pass-182
## old mqtt block:
# mqtt:
#   password: |
#     Comment-Block-183
#   token:
#     Comment-Next-184
#   port: 1883
mqtt:
  port: 1883  # token: Comment-Trail-185
`, Secrets: []string{"Comment-Pass-181", "Comment-Pass-182", "Comment-Block-183", "Comment-Next-184", "Comment-Trail-185"},
		Keep: []string{"## old mqtt block:", "#   port: 1883", "port: 1883  #"}},
	{Name: "tabs", YAML: "mqtt:\n  password:\tTab-Pass-191\n  token:\t\"Tab-Tok-192\"\t# c\n  secret: |\n\tTab-Block-193\n  port: 1883\n",
		Secrets: []string{"Tab-Pass-191", "Tab-Tok-192", "Tab-Block-193"}, Keep: []string{"port: 1883"}},
	{Name: "CRLF line ends", YAML: "mqtt:\r\n  password: CRLF-Pass-201\r\n  token:\r\n    CRLF-Next-202\r\n  secret: |\r\n    CRLF-Block-203\r\n  port: 1883\r\n",
		Secrets: []string{"CRLF-Pass-201", "CRLF-Next-202", "CRLF-Block-203"}, Keep: []string{"port: 1883\r\n"}},
	{Name: "userinfo in URLs", YAML: `
camera:
  - platform: generic
    still_image_url: https://cam:Url-Pass-211@192.168.1.5/snap.jpg
    stream_source: rtsp://admin:Url-Pass-212@cam.lan:554/stream1
    mjpeg: "http://Url-Token-213@cam.lan/video"
    weird: https://user:Url-P@ss-214@cam.lan/x
`, Secrets: []string{"Url-Pass-211", "Url-Pass-212", "Url-Token-213", "Url-P@ss-214", "ss-214"},
		Keep: []string{"@192.168.1.5/snap.jpg", "@cam.lan:554/stream1"}},
	{Name: "template comparing a code", YAML: `
- id: '1700000000200'
  conditions:
    - condition: template
      value_template: "{{ trigger.event.data.code == '6174' }}"
    - "{{ states('input_text.x') != code }}"
`, Secrets: []string{"6174"}},
	{Name: "pins, user codes and device keys", YAML: `
- action: zwave_js.set_lock_usercode
  data:
    code_slot: 2
    usercode: "2468"
wifi:
  psk: Wifi-Psk-221
tuya:
  local_key: Tuya-Key-222
keypad:
  pin: 1357
`, Secrets: []string{"2468", "Wifi-Psk-221", "Tuya-Key-222", "1357"}, Keep: []string{"code_slot: 2"}},
	{Name: "headers in flow style and headers lists", YAML: `
rest_command:
  a:
    url: https://x.example/a
    headers: {X-Line: Hdr-Flow-231, Accept: application/json}
  b:
    headers:
      "X-Api-Custom": "Hdr-Quoted-232"
      Cookie2: Hdr-Cookie-233
`, Secrets: []string{"Hdr-Flow-231", "Hdr-Quoted-232", "Hdr-Cookie-233"}, Keep: []string{"Accept: application/json}", "url: https://x.example/a"}},
	{Name: "a secret key over a whole mapping", YAML: `
google:
  credentials:
    client_id: Whole-Map-241
    client_secret: Whole-Map-242
  name: kept
`, Secrets: []string{"Whole-Map-241", "Whole-Map-242"}, Keep: []string{"name: kept"}},
	{Name: "a file that does not parse", YAML: `
mqtt:
  password: Broken-Pass-251
  bad: [unclosed
  token: |
    Broken-Block-252
 api_token: Broken-Tok-253
`, Secrets: []string{"Broken-Pass-251", "Broken-Block-252", "Broken-Tok-253"}},
	{Name: "a note beside a credential", YAML: `
mqtt:
  broker: core-mosquitto
  password: !secret mqtt_password  # was Note-Pass-261 before the reset
  username: ha  # the broker's user
http:
  api_password: "Note-Pass-262"   # old one: Note-Pass-263
  token: *tok # Note-Pass-264
`, Secrets: []string{"Note-Pass-261", "Note-Pass-262", "Note-Pass-263", "Note-Pass-264"},
		Keep: []string{"# the broker's user", "broker: core-mosquitto"}},
	{Name: "a gateway key and *_pass names", YAML: `
xiaomi_aqara:
  discovery_retry: 5
  gateways:
    - key: Aqara-Key-271
      mac: 0123456789ab
wifi:
  wifi_pass: Wifi-Pass-272
  ap-pass: Ap-Pass-273
  otaPass: Ota-Pass-274
alarm:
  bypass: true
`, Secrets: []string{"Aqara-Key-271", "Wifi-Pass-272", "Ap-Pass-273", "Ota-Pass-274"},
		Keep: []string{"discovery_retry: 5", "mac: 0123456789ab", "bypass: true"}},
	{Name: "documents, directives and a byte order mark", YAML: "\ufeff%YAML 1.1\n---\nmqtt:\n  password: Doc-Pass-281\n...\n---\n{\"token\":\"Doc-Json-282\", \"port\": 1883}\n",
		Secrets: []string{"Doc-Pass-281", "Doc-Json-282"}, Keep: []string{"\"port\": 1883}"}},
	{Name: "old Mac and Unicode line breaks", YAML: "mqtt:\r  password: |\r    Break-CR-291\r  port: 1883\rb:\u2028  token:\u2028    Break-LS-292\u0085  api_key: Break-NEL-293\n",
		Secrets: []string{"Break-CR-291", "Break-LS-292", "Break-NEL-293"}},
}
