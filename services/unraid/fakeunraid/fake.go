// Package fakeunraid is a fake of Unraid's GraphQL API (unraid/api 4.37.2,
// or an older release it plays: Options.Release) for tests and the demo
// profile. It validates every document against that release's schema
// (apischema.SchemaOf) as Apollo does (HTTP 400, one GRAPHQL_VALIDATION_FAILED error per
// problem, all at once), checks the x-api-key header (UNAUTHENTICATED for
// an unknown key, FORBIDDEN for a VIEWER key's mutation), answers exactly
// the selected fields from its state, and changes its state the way
// unraid/api's resolvers do. Its answers are checked against the schema in
// its own tests. Never part of a real stack.
package fakeunraid

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/toolgate/toolgate/services/unraid/apischema"
)

// maxRecorded bounds what the fake remembers of the requests it served:
// tests look at the last few, and a demo stack left running must not grow.
const maxRecorded = 10_000

// Options configure the fake.
type Options struct {
	// ViewerKey may read; AdminKey may also run mutations.
	ViewerKey, AdminKey string
	// Release is the unraid/api release the fake plays, one of
	// apischema.Releases (default apischema.Version): its schema decides
	// which fields exist, and behaviours that changed between releases
	// follow it.
	Release string
	// Throttle, when positive, answers HTTP 429 after this many requests
	// (the fake never refills).
	Throttle int
}

// Call is one request the fake received.
type Call struct {
	Operation string
	Mutation  bool
	Vars      map[string]any
}

// Fake is a running fake Unraid.
type Fake struct {
	opts Options

	mu    sync.Mutex
	state *State
	calls []Call
	// served counts every call (calls keeps only the last maxRecorded).
	served int
}

// New returns a fake serving state (DemoState() for the demo). It panics
// on a release apischema does not know (a test's mistake).
func New(o Options, state *State) *Fake {
	if o.Release == "" {
		o.Release = apischema.Version
	}
	if !apischema.Known(o.Release) {
		panic(fmt.Sprintf("fakeunraid: no schema of release %q (have %v)", o.Release, apischema.Releases))
	}
	if v, ok := state.Info["versions"].(map[string]any); ok {
		if core, ok := v["core"].(map[string]any); ok {
			core["api"] = o.Release
		}
	}
	return &Fake{opts: o, state: state}
}

// Calls returns the requests received so far.
func (f *Fake) Calls() []Call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Call(nil), f.calls...)
}

// Update changes the state under the fake's lock.
func (f *Fake) Update(fn func(*State)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f.state)
}

type gqlRequest struct {
	Query         string         `json:"query"`
	OperationName string         `json:"operationName"`
	Variables     map[string]any `json:"variables"`
}

// Handler serves POST /graphql.
func (f *Fake) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/graphql", f.serve)
	return mux
}

func (f *Fake) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		// Apollo answers a GET without a query like this.
		writeErrors(w, http.StatusBadRequest, "BAD_REQUEST", "GET query missing.")
		return
	}
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		// Apollo's CSRF prevention refuses simple requests.
		writeErrors(w, http.StatusBadRequest, "BAD_REQUEST", "This operation has been blocked as a potential Cross-Site Request Forgery (CSRF).")
		return
	}
	var req gqlRequest
	dec := json.NewDecoder(io.LimitReader(r.Body, 1<<20))
	dec.UseNumber()
	if err := dec.Decode(&req); err != nil || req.Query == "" {
		writeErrors(w, http.StatusBadRequest, "BAD_REQUEST", "POST body missing, invalid Content-Type, or JSON object has no keys.")
		return
	}
	vars := req.Variables
	if vars == nil {
		vars = map[string]any{}
	}
	_, op, err := apischema.ParseAt(f.opts.Release, req.Query, vars)
	if err != nil {
		writeValidation(w, err)
		return
	}

	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, Call{Operation: op.Name, Mutation: op.Operation == ast.Mutation, Vars: vars})
	if len(f.calls) > maxRecorded {
		f.calls = f.calls[len(f.calls)-maxRecorded:]
	}
	f.served++
	if f.opts.Throttle > 0 && f.served > f.opts.Throttle {
		writeErrors(w, http.StatusTooManyRequests, "INTERNAL_SERVER_ERROR", "ThrottlerException: Too Many Requests")
		return
	}
	key := r.Header.Get("X-Api-Key")
	admin := key != "" && key == f.opts.AdminKey
	if !admin && (key == "" || key != f.opts.ViewerKey) {
		writeErrors(w, http.StatusOK, "UNAUTHENTICATED", "User not found")
		return
	}
	if op.Operation == ast.Mutation && !admin {
		writeErrors(w, http.StatusOK, "FORBIDDEN", "Forbidden resource")
		return
	}
	var root map[string]any
	if op.Operation == ast.Mutation {
		root = f.mutationRoot()
	} else {
		root = f.queryRoot()
	}
	data, err := project(root, op.SelectionSet, vars)
	if err != nil {
		writeErrors(w, http.StatusOK, "INTERNAL_SERVER_ERROR", err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_ = json.NewEncoder(w).Encode(map[string]any{"data": data})
}

// writeValidation answers a document the schema refuses as Apollo Server
// does: HTTP 400, no data, one error per problem with its locations and
// extensions.code GRAPHQL_VALIDATION_FAILED (graphql-js reports every
// problem it finds, not only the first).
func writeValidation(w http.ResponseWriter, err error) {
	var errs []any
	for _, e := range apischema.Errors(err) {
		locs := []any{}
		for _, l := range e.Locations {
			locs = append(locs, map[string]any{"line": l.Line, "column": l.Column})
		}
		errs = append(errs, map[string]any{"message": e.Message, "locations": locs, "extensions": map[string]any{"code": "GRAPHQL_VALIDATION_FAILED"}})
	}
	if len(errs) == 0 {
		errs = append(errs, map[string]any{"message": err.Error(), "extensions": map[string]any{"code": "GRAPHQL_VALIDATION_FAILED"}})
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusBadRequest)
	_ = json.NewEncoder(w).Encode(map[string]any{"errors": errs})
}

func writeErrors(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	body := map[string]any{"errors": []any{map[string]any{"message": msg, "extensions": map[string]any{"code": code}}}}
	if status == http.StatusOK {
		body["data"] = nil
	}
	_ = json.NewEncoder(w).Encode(body)
}

// resolver is a field with arguments (or a side effect): it gets the
// field's argument values.
type resolver func(args map[string]any) (any, error)

// project answers set from v: only selected fields, resolvers called with
// their arguments, typed values turned into JSON trees as they are reached.
func project(v any, set ast.SelectionSet, vars map[string]any) (any, error) {
	v, err := tree(v)
	if err != nil || v == nil {
		return v, err
	}
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			if out[i], err = project(e, set, vars); err != nil {
				return nil, err
			}
		}
		return out, nil
	case map[string]any:
		out := map[string]any{}
		for _, sel := range set {
			fl, ok := sel.(*ast.Field)
			if !ok {
				return nil, fmt.Errorf("the fake serves no fragments")
			}
			key := fl.Alias
			if key == "" {
				key = fl.Name
			}
			val, present := x[fl.Name]
			if !present {
				return nil, fmt.Errorf("the fake serves no field %s", fl.Name)
			}
			if r, ok := val.(resolver); ok {
				if val, err = r(fl.ArgumentMap(vars)); err != nil {
					return nil, err
				}
			}
			if len(fl.SelectionSet) == 0 {
				if val, err = tree(val); err != nil {
					return nil, err
				}
			} else if val, err = project(val, fl.SelectionSet, vars); err != nil {
				return nil, err
			}
			out[key] = val
		}
		return out, nil
	}
	if len(set) > 0 {
		return nil, fmt.Errorf("the fake holds a scalar where an object was selected")
	}
	return v, nil
}

// tree turns a typed value into maps, slices and json.Numbers; generic
// values and resolvers pass unchanged.
func tree(v any) (any, error) {
	switch v.(type) {
	case nil, map[string]any, []any, resolver, string, bool, json.Number:
		return v, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	var out any
	err = dec.Decode(&out)
	return out, err
}
