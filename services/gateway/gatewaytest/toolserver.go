package gatewaytest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// ToolServer is an OpenAPI tool-server connection as OpenWebUI makes one
// (backend/open_webui/utils/tools.py): a connection URL, the document at
// URL + "/openapi.json" fetched with the bearer key, one tool per
// operationId (description, else summary; parameters = the request body
// schema's properties and required), and a call that finds the operation
// by operationId and POSTs the arguments as the JSON body to connection
// URL + the path key, with "Authorization: Bearer <key>" and
// "Content-Type: application/json". Like OpenWebUI it ignores the
// document's servers and refuses to follow redirects.
type ToolServer struct {
	// URL is the connection URL, e.g. <gateway>/openapi/demo.
	URL string
	// Doc is the document read by Load.
	Doc map[string]any

	hc *http.Client
	t  testing.TB
}

// ToolServer returns an OpenWebUI-style connection of clientName (as end
// user user, "" for none) to the gateway's tool server endpoint.
func (g *Gateway) ToolServer(clientName, user, endpoint string) *ToolServer {
	hdr := map[string]string{"Authorization": "Bearer " + g.Tokens[clientName]}
	if user != "" {
		hdr["X-OpenWebUI-User-Email"] = user
	}
	return NewToolServer(g.t, g.URL+"/openapi/"+endpoint, RecordingClient(g.Wire, hdr))
}

// NewToolServer returns a connection to url whose requests go through hc
// (which sets the bearer token and any user headers).
func NewToolServer(t testing.TB, url string, hc *http.Client) *ToolServer {
	c := *hc
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &ToolServer{URL: strings.TrimRight(url, "/"), hc: &c, t: t}
}

// Load fetches the document and returns its HTTP status and raw body.
func (s *ToolServer) Load() (int, []byte) {
	s.t.Helper()
	req, err := http.NewRequestWithContext(s.t.Context(), http.MethodGet, s.URL+"/openapi.json", nil)
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Content-Type", "application/json")
	res, err := s.hc.Do(req)
	if err != nil {
		s.t.Fatalf("GET %s/openapi.json: %v", s.URL, err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	s.Doc = nil
	if res.StatusCode == http.StatusOK {
		if err := json.Unmarshal(body, &s.Doc); err != nil {
			s.t.Fatalf("the document is not JSON: %v", err)
		}
	}
	return res.StatusCode, body
}

// ToolSpec is one tool as OpenWebUI hands it to the model.
type ToolSpec struct {
	Name        string
	Description string
	Properties  map[string]any
	Required    []string
}

// Tools converts the loaded document into tool specs as OpenWebUI does.
func (s *ToolServer) Tools() []ToolSpec {
	var out []ToolSpec
	paths, _ := s.Doc["paths"].(map[string]any)
	for _, methods := range paths {
		for _, op := range methods.(map[string]any) {
			op, _ := op.(map[string]any)
			id, _ := op["operationId"].(string)
			if id == "" {
				continue
			}
			spec := ToolSpec{Name: id, Properties: map[string]any{}}
			if d, ok := op["description"].(string); ok {
				spec.Description = d
			} else if d, ok := op["summary"].(string); ok {
				spec.Description = d
			}
			body, _ := op["requestBody"].(map[string]any)
			content, _ := body["content"].(map[string]any)
			media, _ := content["application/json"].(map[string]any)
			schema, _ := media["schema"].(map[string]any)
			if props, ok := schema["properties"].(map[string]any); ok {
				spec.Properties = props
				req, _ := schema["required"].([]any)
				for _, r := range req {
					if r, ok := r.(string); ok {
						spec.Required = append(spec.Required, r)
					}
				}
			}
			out = append(out, spec)
		}
	}
	return out
}

// Call runs the operation operationID with params as OpenWebUI does and
// returns the HTTP status and the JSON object of the answer.
func (s *ToolServer) Call(operationID string, params map[string]any) (int, map[string]any) {
	s.t.Helper()
	route, method := s.route(operationID)
	if route == "" {
		s.t.Fatalf("no operation %s in the document", operationID)
	}
	return s.Post(route, method, params)
}

// Post sends params as OpenWebUI would to connection URL + route, even for
// a route the document does not list.
func (s *ToolServer) Post(route, method string, params map[string]any) (int, map[string]any) {
	s.t.Helper()
	if params == nil {
		params = map[string]any{}
	}
	body, _ := json.Marshal(params)
	req, err := http.NewRequestWithContext(s.t.Context(), strings.ToUpper(method), s.URL+route, bytes.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := s.hc.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, route, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		s.t.Fatalf("%s %s answered %d with a body that is not a JSON object: %.300s", method, route, res.StatusCode, raw)
	}
	return res.StatusCode, m
}

func (s *ToolServer) route(operationID string) (string, string) {
	paths, _ := s.Doc["paths"].(map[string]any)
	for route, methods := range paths {
		for method, op := range methods.(map[string]any) {
			if op, ok := op.(map[string]any); ok && op["operationId"] == operationID {
				return route, method
			}
		}
	}
	return "", ""
}
