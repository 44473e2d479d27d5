package fakeunraid

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/services/unraid/apischema"
	"github.com/toolgate/toolgate/services/unraid/unraidapi"
)

const viewer, admin = "viewer-key-0123456789abcdef", "admin-key-0123456789abcdef"

// varsFor are realistic variables for each document that takes some.
var varsFor = map[string]map[string]any{
	"ContainerLogs":        {"id": pid("1f0e5d2c9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d"), "tail": 5},
	"Notifications":        {"filter": map[string]any{"type": "UNREAD", "offset": 0, "limit": 10}},
	"LogFile":              {"path": "/var/log/syslog", "lines": 20},
	"ContainerStart":       {"id": pid("5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e")},
	"ContainerStop":        {"id": pid("2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b")},
	"ContainerRestart":     {"id": pid("3b2c1d0e9f8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c")},
	"VMStart":              {"id": pid("8d2f7c1e-3b4a-4c5d-9e6f-0a1b2c3d4e5f")},
	"VMStop":               {"id": pid("6a5b4c3d-2e1f-4a0b-9c8d-7e6f5a4b3c2d")},
	"ParityStart":          {"correct": false},
	"ArchiveNotifications": {"ids": []any{pid("1733206800-docker-update")}},
}

func post(t *testing.T, h http.Handler, key string, doc unraidapi.Document, vars map[string]any) (int, map[string]any) {
	t.Helper()
	return postText(t, h, key, doc.Name, doc.Text, vars)
}

func postText(t *testing.T, h http.Handler, key, name, text string, vars map[string]any) (int, map[string]any) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": text, "operationName": name, "variables": vars})
	req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("x-api-key", key)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	dec := json.NewDecoder(rec.Body)
	dec.UseNumber()
	var out map[string]any
	if err := dec.Decode(&out); err != nil {
		t.Fatalf("%s: answer is not JSON: %v", name, err)
	}
	return rec.Code, out
}

// Every document the service sends, in the form it sends to each release
// the fake plays, gets an answer whose shape is exactly what that
// release's schema says for the selection: the fake cannot drift from the
// real API without this test failing. A document a release cannot answer
// is refused as that release refuses it.
func TestAnswersMatchTheSchema(t *testing.T) {
	for _, release := range apischema.Releases {
		fake := New(Options{ViewerKey: viewer, AdminKey: admin, Release: release}, DemoState(time.Unix(1_765_000_000, 0)))
		h := fake.Handler()
		for _, doc := range unraidapi.Documents() {
			t.Run(release+"/"+doc.Name, func(t *testing.T) {
				vars := varsFor[doc.Name]
				if vars == nil {
					vars = map[string]any{}
				}
				key := viewer
				if doc.Mutation {
					key = admin
				}
				text, _, terr := doc.TextFor(release)
				if terr != nil {
					status, out := post(t, h, key, doc, vars)
					if status != http.StatusBadRequest || !strings.Contains(fmt.Sprint(out["errors"]), "GRAPHQL_VALIDATION_FAILED") {
						t.Fatalf("%v, yet the fake answered HTTP %d: %v", terr, status, out)
					}
					return
				}
				status, out := postText(t, h, key, doc.Name, text, vars)
				if status != http.StatusOK || out["errors"] != nil {
					t.Fatalf("HTTP %d: %v", status, out["errors"])
				}
				_, op, err := apischema.ParseAt(release, text, vars)
				if err != nil {
					t.Fatal(err)
				}
				if err := apischema.CheckDataAt(release, op, out["data"]); err != nil {
					t.Fatalf("answer does not match the schema: %v", err)
				}
			})
		}
	}
}

// The checker itself refuses a wrong shape, so the test above means something.
func TestTheShapeCheckerRefusesDrift(t *testing.T) {
	_, op, err := apischema.Parse(`query Q { array { state capacity { kilobytes { free } } } }`, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{
		"unknown enum value": `{"array":{"state":"RUNNING","capacity":{"kilobytes":{"free":"1"}}}}`,
		"number for string":  `{"array":{"state":"STARTED","capacity":{"kilobytes":{"free":1}}}}`,
		"null for non-null":  `{"array":{"state":null,"capacity":{"kilobytes":{"free":"1"}}}}`,
		"extra field":        `{"array":{"state":"STARTED","extra":1,"capacity":{"kilobytes":{"free":"1"}}}}`,
		"missing field":      `{"array":{"capacity":{"kilobytes":{"free":"1"}}}}`,
	} {
		dec := json.NewDecoder(strings.NewReader(data))
		dec.UseNumber()
		var v any
		_ = dec.Decode(&v)
		if err := apischema.CheckData(op, v); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// The fake refuses as Unraid does: no or a wrong key, a VIEWER key's
// mutation, an invalid document, a field an older Unraid lacks, the
// throttle.
func TestRefusals(t *testing.T) {
	state := DemoState(time.Now())
	cases := []struct {
		name     string
		opts     Options
		key      string
		doc      unraidapi.Document
		status   int
		code     string
		contains string
	}{
		{"no key", Options{ViewerKey: viewer}, "", unraidapi.VMs, 200, "UNAUTHENTICATED", ""},
		{"wrong key", Options{ViewerKey: viewer}, "nope", unraidapi.VMs, 200, "UNAUTHENTICATED", ""},
		{"viewer mutation", Options{ViewerKey: viewer, AdminKey: admin}, viewer, unraidapi.ParityPause, 200, "FORBIDDEN", ""},
		{"invalid document", Options{ViewerKey: viewer}, viewer, unraidapi.Document{Name: "X", Text: `query X { array { nope } }`}, 400, "GRAPHQL_VALIDATION_FAILED", `Cannot query field "nope"`},
		{"older unraid", Options{ViewerKey: viewer, Release: "4.20.4"}, viewer, unraidapi.ArrayStatus, 400, "GRAPHQL_VALIDATION_FAILED", `Cannot query field "isSpinning" on type "ArrayDisk".`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, out := post(t, New(c.opts, state).Handler(), c.key, c.doc, map[string]any{})
			if status != c.status {
				t.Fatalf("HTTP %d, want %d: %v", status, c.status, out)
			}
			if c.code == "" {
				return
			}
			errs, _ := out["errors"].([]any)
			if len(errs) == 0 {
				t.Fatalf("no errors: %v", out)
			}
			e := errs[0].(map[string]any)
			if code := e["extensions"].(map[string]any)["code"]; code != c.code {
				t.Errorf("code %v, want %s", code, c.code)
			}
			if !strings.Contains(e["message"].(string), c.contains) {
				t.Errorf("message %q lacks %q", e["message"], c.contains)
			}
		})
	}
	// Like graphql-js, every unknown field is named at once, with where it is.
	_, out := post(t, New(Options{ViewerKey: viewer, Release: "4.20.4"}, state).Handler(), viewer, unraidapi.ArrayStatus, nil)
	if errs, _ := out["errors"].([]any); len(errs) != 3 || out["data"] != nil {
		t.Errorf("want one error per isSpinning (3) and no data: %v", out)
	} else if locs, _ := errs[1].(map[string]any)["locations"].([]any); len(locs) != 1 {
		t.Errorf("no location: %v", errs[1])
	}
	h := New(Options{ViewerKey: viewer, Throttle: 2}, state).Handler()
	for i, want := range []int{200, 200, 429} {
		if status, _ := post(t, h, viewer, unraidapi.VMs, nil); status != want {
			t.Errorf("request %d: HTTP %d, want %d", i+1, status, want)
		}
	}
}

// Mutations change the state the next read sees.
func TestMutationsChangeState(t *testing.T) {
	fake := New(Options{ViewerKey: viewer, AdminKey: admin}, DemoState(time.Now()))
	h := fake.Handler()
	if status, out := post(t, h, admin, unraidapi.ContainerStop, varsFor["ContainerStop"]); status != 200 || out["errors"] != nil {
		t.Fatalf("stop: %d %v", status, out)
	}
	_, out := post(t, h, viewer, unraidapi.Containers, nil)
	raw, _ := json.Marshal(out)
	if !strings.Contains(string(raw), `"names":["/sonarr"],"state":"EXITED"`) && !strings.Contains(string(raw), `"state":"EXITED"`) {
		t.Fatalf("sonarr not stopped: %s", raw)
	}
	post(t, h, admin, unraidapi.ParityStart, map[string]any{"correct": false})
	_, out = post(t, h, viewer, unraidapi.ArrayStatus, nil)
	raw, _ = json.Marshal(out)
	if !strings.Contains(string(raw), `"status":"RUNNING"`) {
		t.Fatalf("parity check not running: %.300s", raw)
	}
	if status, out := post(t, h, admin, unraidapi.ParityStart, map[string]any{"correct": false}); status != 200 || out["errors"] == nil {
		t.Fatalf("a second start while running must fail as in unraid/api: %v", out)
	}
}

// The mutations change the fake as unraid/api's services change Unraid:
// VmsService.setVmState acts only from the states its switch handles,
// refuses what its table does not allow, and answers true for the rest;
// dockerode fails on Docker's 304 for a container already in that state;
// before API 4.35.0 a parity resume started a new check.
func TestMutationsFollowUpstream(t *testing.T) {
	type step struct {
		doc    unraidapi.Document
		vars   map[string]any
		errs   bool
		state  string // the VM's or container's state afterwards
		vmID   string
		ctrID  string
		before func(*State)
	}
	win, pf := "8d2f7c1e-3b4a-4c5d-9e6f-0a1b2c3d4e5f", "6a5b4c3d-2e1f-4a0b-9c8d-7e6f5a4b3c2d"
	setVM := func(id, state string) func(*State) {
		return func(s *State) {
			for i := range s.VMs {
				if strip(s.VMs[i].ID) == id {
					s.VMs[i].State = state
				}
			}
		}
	}
	vm := func(doc unraidapi.Document, id, from, want string, errs bool) step {
		return step{doc: doc, vars: map[string]any{"id": pid(id)}, errs: errs, state: want, vmID: id, before: setVM(id, from)}
	}
	cases := map[string]step{
		"start boots a shut-off VM":            vm(unraidapi.VMStart, win, "SHUTOFF", "RUNNING", false),
		"start resumes a paused VM":            vm(unraidapi.VMStart, win, "PAUSED", "RUNNING", false),
		"start of a crashed VM is refused":     vm(unraidapi.VMStart, win, "CRASHED", "CRASHED", true),
		"start of a suspended VM does nothing": vm(unraidapi.VMStart, win, "PMSUSPENDED", "PMSUSPENDED", false),
		"stop shuts a running VM off":          vm(unraidapi.VMStop, pf, "RUNNING", "SHUTOFF", false),
		"stop powers a paused VM off":          vm(unraidapi.VMStop, pf, "PAUSED", "SHUTOFF", false),
		"stop of an idle VM does nothing":      vm(unraidapi.VMStop, pf, "IDLE", "IDLE", false),
		"stop of a shut-off VM is refused":     vm(unraidapi.VMStop, pf, "SHUTOFF", "SHUTOFF", true),
		"start of a running container fails": {doc: unraidapi.ContainerStart, vars: varsFor["ContainerStop"], errs: true,
			ctrID: "2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b", state: "RUNNING"},
		"stop of a stopped container fails": {doc: unraidapi.ContainerStop, vars: varsFor["ContainerStart"], errs: true,
			ctrID: "5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e", state: "EXITED"},
		"restart starts a stopped container": {doc: unraidapi.ContainerRestart, vars: varsFor["ContainerStart"],
			ctrID: "5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e", state: "RUNNING"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			f := New(Options{ViewerKey: viewer, AdminKey: admin}, DemoState(time.Now()))
			if c.before != nil {
				f.Update(c.before)
			}
			_, out := post(t, f.Handler(), admin, c.doc, c.vars)
			if (out["errors"] != nil) != c.errs {
				t.Fatalf("errors %v, want errors: %v", out["errors"], c.errs)
			}
			f.Update(func(s *State) {
				for _, v := range s.VMs {
					if strip(v.ID) == c.vmID && v.State != c.state {
						t.Errorf("VM is %s, want %s", v.State, c.state)
					}
				}
				for _, x := range s.Containers {
					if strip(x.ID) == c.ctrID && x.State != c.state {
						t.Errorf("container is %s, want %s", x.State, c.state)
					}
				}
			})
		})
	}

	for _, tc := range []struct {
		release  string
		progress int64
		correct  bool
	}{{"4.34.0", 0, false}, {"4.37.2", 40, true}} {
		f := New(Options{ViewerKey: viewer, AdminKey: admin, Release: tc.release}, DemoState(time.Now()))
		f.Update(func(s *State) {
			tr, forty := true, int64(40)
			s.Array.ParityCheckStatus = &unraidapi.ParityCheck{Status: "PAUSED", Running: &tr, Paused: &tr, Correcting: &tr, Progress: &forty}
		})
		if _, out := post(t, f.Handler(), admin, unraidapi.ParityResume, nil); out["errors"] != nil {
			t.Fatalf("%s resume: %v", tc.release, out)
		}
		f.Update(func(s *State) {
			p := s.Array.ParityCheckStatus
			if *p.Progress != tc.progress || *p.Correcting != tc.correct || p.Status != "RUNNING" {
				t.Errorf("%s: after resume progress %d correcting %v status %s", tc.release, *p.Progress, *p.Correcting, p.Status)
			}
		})
	}
}

// A release the fake has no schema of is a test's mistake.
func TestUnknownReleasePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	New(Options{Release: "3.0.0"}, DemoState(time.Now()))
}
