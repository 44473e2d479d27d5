// Package fakeunraid is a fake of Unraid's GraphQL API (unraid/api 4.37)
// for tests and the demo profile. It validates every document against the
// vendored schema as Apollo does (HTTP 400 and GRAPHQL_VALIDATION_FAILED
// for an invalid one), checks the x-api-key header (UNAUTHENTICATED for an
// unknown key, FORBIDDEN for a VIEWER key's mutation), and answers exactly
// the selected fields from its state. Its answers are checked against the
// schema in its own tests. Never part of a real stack.
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

// Options configure the fake.
// maxRecorded bounds what the fake remembers of the requests it served:
// tests look at the last few, and a demo stack left running must not grow.
const maxRecorded = 10_000

type Options struct {
	// ViewerKey may read; AdminKey may also run mutations.
	ViewerKey, AdminKey string
	// Missing lists fields ("Query.metrics", "InfoCpu.speedmax") this
	// fake's Unraid is too old to know: a document selecting one is
	// refused the way Apollo refuses an unknown field.
	Missing []string
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
	opts    Options
	missing map[string]bool

	mu    sync.Mutex
	state *State
	calls []Call
	// served counts every call (calls keeps only the last maxRecorded).
	served int
}

// New returns a fake serving state (DemoState() for the demo).
func New(o Options, state *State) *Fake {
	f := &Fake{opts: o, state: state, missing: map[string]bool{}}
	for _, m := range o.Missing {
		f.missing[m] = true
	}
	return f
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
	_, op, err := apischema.Parse(req.Query, vars)
	if err != nil {
		msg := err.Error()
		if l := apischema.Errors(err); len(l) > 0 {
			msg = l[0].Message
		}
		writeErrors(w, http.StatusBadRequest, "GRAPHQL_VALIDATION_FAILED", msg)
		return
	}
	if name := f.unknownField(op); name != "" {
		writeErrors(w, http.StatusBadRequest, "GRAPHQL_VALIDATION_FAILED", name)
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

// unknownField returns Apollo's message for the first field an older
// Unraid would not know, or "".
func (f *Fake) unknownField(op *ast.OperationDefinition) string {
	var walk func(set ast.SelectionSet) string
	walk = func(set ast.SelectionSet) string {
		for _, sel := range set {
			fl, ok := sel.(*ast.Field)
			if !ok || fl.ObjectDefinition == nil {
				continue
			}
			if f.missing[fl.ObjectDefinition.Name+"."+fl.Name] {
				return fmt.Sprintf("Cannot query field %q on type %q.", fl.Name, fl.ObjectDefinition.Name)
			}
			if m := walk(fl.SelectionSet); m != "" {
				return m
			}
		}
		return ""
	}
	return walk(op.SelectionSet)
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
