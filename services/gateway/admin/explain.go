package admin

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"text/tabwriter"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/services/gateway/policy"
	"github.com/toolgate/toolgate/services/gateway/router"
)

// Question asks what one call would meet: the client (by its name in the
// tokens file), its end user and the role the user's verified token
// carries, the endpoint it calls ("/mcp" when empty), the tool and its
// arguments (a JSON object; none when empty).
type Question struct {
	Client   string          `json:"client"`
	User     string          `json:"user,omitempty"`
	Role     string          `json:"role,omitempty"`
	Endpoint string          `json:"endpoint,omitempty"`
	Tool     string          `json:"tool"`
	Args     json.RawMessage `json:"arguments,omitempty"`
}

// Explainer answers a Question by the steps a real call takes (the
// router's Explain); a question it cannot ask (an unknown client, a user
// the client cannot name) is a *toolerr.Error.
type Explainer interface {
	Explain(ctx context.Context, q Question) (router.Explanation, error)
}

// Option configures NewHandler.
type Option func(*handler)

// WithExplainer serves POST /admin/explain.
func WithExplainer(e Explainer) Option { return func(h *handler) { h.explainer = e } }

const maxExplainBody = 64 << 10

func (h *handler) explain(w http.ResponseWriter, r *http.Request) {
	if h.explainer == nil {
		writeError(w, http.StatusNotFound, toolerr.NotFound, "this gateway explains no decisions")
		return
	}
	var q Question
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxExplainBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&q); err != nil || dec.Decode(new(json.RawMessage)) != io.EOF {
		writeError(w, http.StatusBadRequest, toolerr.InvalidArgument,
			`body must be a JSON object like {"client":"openwebui","user":"ann@example.org","tool":"demo_counter_add","arguments":{"amount":1}}`)
		return
	}
	ex, err := h.explainer.Explain(r.Context(), q)
	if err != nil {
		status := http.StatusBadRequest
		if toolerr.CodeOf(err) == toolerr.NotFound {
			status = http.StatusNotFound
		}
		writeError(w, status, toolerr.CodeOf(err), toolerr.MessageOf(err))
		return
	}
	writeJSON(w, http.StatusOK, ex)
}

// explainCmd is `policy explain --client C [--user U] [--role R]
// [--endpoint /mcp/NAME] [--json] TOOL [ARGS]`.
func (c *CLI) explainCmd(ctx context.Context, args []string) error {
	pos, flags, err := parseArgs(args, []string{"client", "user", "role", "endpoint"}, []string{"json"})
	if err != nil {
		return err
	}
	if flags["client"] == "" || len(pos) < 1 || len(pos) > 2 {
		return usageError("policy explain takes --client NAME, a tool and optionally its arguments as one JSON object")
	}
	q := Question{Client: flags["client"], User: flags["user"], Role: flags["role"], Endpoint: flags["endpoint"], Tool: pos[0]}
	if len(pos) == 2 {
		if !json.Valid([]byte(pos[1])) {
			return usageError("the arguments must be one JSON object, e.g. '{\"amount\":1}'")
		}
		q.Args = json.RawMessage(pos[1])
	}
	var ex router.Explanation
	if err := c.do(ctx, http.MethodPost, "/admin/explain", q, &ex); err != nil {
		return err
	}
	out := c.out()
	if flags["json"] != "" {
		b, err := json.MarshalIndent(ex, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(out, "%s\n", b)
		return err
	}
	return PrintExplanation(out, q, ex)
}

// PrintExplanation writes an explanation for a terminal, every value
// escaped (tool names and reasons come from services and the policy).
func PrintExplanation(out io.Writer, q Question, ex router.Explanation) error {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	who := display(q.Client)
	if q.User != "" {
		who += ", end user " + display(q.User)
		if q.Role != "" {
			who += " (role " + display(q.Role) + ")"
		}
	}
	endpoint := q.Endpoint
	if endpoint == "" {
		endpoint = "/mcp"
	}
	fmt.Fprintf(tw, "caller\t%s\n", who)
	fmt.Fprintf(tw, "endpoint\t%s\n", display(endpoint))
	tool := display(ex.Tool)
	if ex.Service != "" {
		kind := "a read"
		if ex.Write {
			kind = "a write"
		}
		tool += " on " + display(ex.Service) + " (" + kind + ")"
	}
	fmt.Fprintf(tw, "tool\t%s\n", tool)
	for _, row := range ExplanationRows(ex) {
		fmt.Fprintf(tw, "%s\t%s\n", row[0], display(row[1]))
	}
	return tw.Flush()
}

// ExplanationRows are the words of an explanation, label and text, the
// same on the command line and in the console.
func ExplanationRows(ex router.Explanation) [][2]string {
	if ex.Refused != "" {
		return [][2]string{
			{"refused", fmt.Sprintf("%s: %s (%s)", ex.Refused, ex.Message, ex.Code)},
			{"a person", "is not asked: the call never reaches the policy"},
		}
	}
	if ex.Decision == nil {
		return [][2]string{{"decision", "none"}}
	}
	d := ex.Decision
	rows := [][2]string{{"decision", fmt.Sprintf("%s: %s (%s)", d.Decision, d.Reason, d.ReasonID)}}
	switch {
	case d.Decision == policy.Deny:
		rows = append(rows, [2]string{"a person", "is not asked: the call is refused"})
	case ex.Person:
		rows = append(rows, [2]string{"a person", "is asked: the write waits for approval on the approval page or `gateway approvals approve`"})
	case d.Decision == policy.Confirm:
		rows = append(rows, [2]string{"a person", "is not asked: the client confirms with the ticket after its user agreed to the preview"})
	case ex.Write:
		rows = append(rows, [2]string{"a person", "is not asked: the write is applied after its preview, without a ticket"})
	default:
		rows = append(rows, [2]string{"a person", "is not asked: the read runs"})
	}
	if ex.FactsMayRaise {
		rows = append(rows, [2]string{"note", "what the preview reports it would touch (a lock behind a \"turn on\") may still raise this, never lower it"})
	}
	return rows
}
