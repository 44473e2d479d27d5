package router

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/internal/truncate"
	"github.com/toolgate/toolgate/services/gateway/audit"
	"github.com/toolgate/toolgate/services/gateway/auth"
	"github.com/toolgate/toolgate/services/gateway/policy"
	"github.com/toolgate/toolgate/services/gateway/tickets"
)

// call is one tools/call as it moves through the gateway.
type call struct {
	e          *entry
	id         auth.Identity
	args       map[string]any
	argsDigest string
	confirm    bool
	// ticket is the ticket this call is about: the one the client
	// presented, the one a preview issued, or an auto_ id. The audit
	// records it.
	ticket string
	// held is the presented ticket as the store had it when the call
	// arrived, if it is bound to this very call: looked up once, for the
	// policy's ticket state and the approval check of the confirm.
	held     *tickets.Ticket
	force    bool
	start    time.Time
	decision policy.Decision
	// endpoint is the endpoint the call was admitted on (see admit).
	endpoint string
	// canonical is the arguments' canonical JSON (what argsDigest hashes,
	// and what a read sends the service).
	canonical []byte
	// direct: the call came on the direct path (fastcall.go), which writes
	// a read's result as the service sent it. Then serve may answer with
	// a nil result and the passthrough body, and textBytes for the audit.
	direct      bool
	passthrough []byte
	textBytes   int
	// viaDiscovery: the call came through toolgate_call_tool, so the next
	// step of a preview names that tool.
	viaDiscovery bool
}

func (r *Router) serve(ctx context.Context, c *call, req mcp.CallToolRequest) (*mcp.CallToolResult, string) {
	res, outcome := r.route(ctx, c, req)
	if res != nil {
		// clean keeps the preview digest and facts of a service's _meta
		// for the gateway's own checks; none of it leaves (a failed
		// preview or a read could carry them too).
		res.Meta = nil
	}
	return res, outcome
}

// route decides the call and runs it the way its decision says.
func (r *Router) route(ctx context.Context, c *call, req mcp.CallToolRequest) (*mcp.CallToolResult, string) {
	if err := r.parseArgs(c, req); err != nil {
		return errorResult(err), string(toolerr.CodeOf(err))
	}
	if fail := r.decide(ctx, c); fail != nil {
		return fail, "ticket_rejected"
	}
	d := c.decision
	// A write that may change something (allowed as it is, or confirmed
	// with a ticket) has its decision on record before the service is
	// touched. A preview or a refusal changes nothing: like a read's, its
	// line may wait, and goes out with its ticket and outcome lines in one
	// write before the answer leaves.
	if c.e.write {
		rec := r.record(c, audit.EventDecision, "", 0)
		rec.Sync = d.Decision == policy.Allow || c.ticket != ""
		r.deps.Audit.Log(rec)
	}

	switch {
	case d.Decision == policy.Deny:
		return errorResult(toolerr.New(toolerr.Forbidden, "denied by policy: %s", d.Reason)), "denied"
	case !c.e.write && d.Decision == policy.Allow:
		if rc, ok := r.backends[c.e.service].(rawCaller); ok && c.direct {
			return r.forwardRaw(ctx, c, rc)
		}
		return r.forward(ctx, c, nil, true)
	case !c.e.write:
		// The policy asked for confirmation of a read; reads have no
		// preview, so there is nothing a user could consent to.
		return errorResult(toolerr.New(toolerr.Forbidden, "policy requires confirmation for a read tool, which is not supported: %s", d.Reason)), "denied"
	case d.Decision == policy.Allow && c.ticket == "":
		// A low-risk write the policy allows without a ticket. The service
		// still applies only a scope it previewed, so preview first.
		return r.applyWithoutTicket(ctx, c)
	case c.ticket == "":
		if c.confirm {
			return errorResult(toolerr.New(toolerr.InvalidArgument,
				"confirm: true needs the ticket from the preview; call without confirm first to get a preview and a ticket")), string(toolerr.InvalidArgument)
		}
		return r.preview(ctx, c)
	default:
		return r.confirmTicket(ctx, c)
	}
}

// decide asks the policy about the call (its ticket's state and facts
// when it presents one bound to it) and keeps the answer in c.decision; an
// engine failure is a deny. It returns the failure to answer when the
// ticket cannot be read.
func (r *Router) decide(ctx context.Context, c *call) *mcp.CallToolResult {
	state := "none"
	var preview *policy.Preview
	if c.ticket != "" {
		if t, ok := r.deps.Tickets.Get(c.ticket); ok && t.Binding == r.binding(c) {
			c.held, state = &t, "valid"
			// The confirm is decided on the facts the ticket was issued
			// for; the service refuses the apply if its recomputed facts
			// differ.
			preview = &policy.Preview{}
			if len(t.Facts) > 0 {
				f, err := approval.ParseFacts(t.Facts)
				if err != nil {
					return errorResult(toolerr.New(toolerr.Forbidden, "the ticket's preview facts are unreadable; nothing was changed — call without confirm for a new preview"))
				}
				preview.Facts = f
			}
		}
	}
	in := r.input(c.id, c.e, policy.ActionCall, c.args, policy.Ticket{State: state, Force: c.force})
	in.Preview = preview
	d, err := r.deps.Policy.Decide(ctx, in)
	if err == nil {
		err = policy.Validate(d)
	}
	if err != nil {
		r.log.Error("policy failed; denying", "error", err)
		d = policy.Decision{Decision: policy.Deny, Reason: policyFailure(err), ReasonID: policyFailureID(err)}
	}
	c.decision = d
	return nil
}

// parseArgs decodes the arguments keeping numbers exact and takes the
// gateway's own confirm and ticket arguments out of them.
func (r *Router) parseArgs(c *call, req mcp.CallToolRequest) error {
	raw := req.Params.RawArguments
	if len(raw) == 0 {
		if req.Params.Arguments == nil {
			raw = json.RawMessage("{}")
		} else {
			b, err := json.Marshal(req.Params.Arguments)
			if err != nil {
				return toolerr.Wrap(toolerr.InvalidArgument, err, "arguments are not a JSON object")
			}
			raw = b
		}
	}
	// Before anything (the policy engine, the service's validator) parses
	// the numbers exactly.
	if err := toolkit.CheckNumbers(raw); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var args map[string]any
	if err := dec.Decode(&args); err != nil {
		return toolerr.Wrap(toolerr.InvalidArgument, err, "arguments must be a JSON object")
	}
	if args == nil {
		args = map[string]any{}
	}
	if c.e.write {
		if v, ok := args[argConfirm]; ok {
			b, isBool := v.(bool)
			if !isBool {
				return toolerr.New(toolerr.InvalidArgument, "confirm must be a boolean")
			}
			c.confirm = b
			delete(args, argConfirm)
		}
		if v, ok := args[argTicket]; ok {
			s, isStr := v.(string)
			if !isStr || len(s) > 128 {
				return toolerr.New(toolerr.InvalidArgument, "ticket must be the ticket string from the preview")
			}
			c.ticket = s
			delete(args, argTicket)
		}
		if c.ticket != "" && !c.confirm {
			return toolerr.New(toolerr.InvalidArgument, "a ticket is only accepted together with confirm: true, after the user agreed to the preview")
		}
	}
	if f, ok := args["force"].(bool); ok {
		c.force = f
	}
	canonical, err := approval.Canonical(args)
	if err != nil {
		return toolerr.Wrap(toolerr.InvalidArgument, err, "arguments cannot be digested")
	}
	// approval.Digest's value, from the bytes a read sends on.
	sum := sha256.Sum256(canonical)
	c.args, c.argsDigest, c.canonical = args, hex.EncodeToString(sum[:]), canonical
	return nil
}

func (r *Router) binding(c *call) tickets.Binding {
	return tickets.Binding{
		Client: c.id.Client.Name, User: c.id.User, UserRole: c.id.UserRole, Service: c.e.service,
		Tool: c.e.upstream.Name, ArgsDigest: c.argsDigest, Force: c.force,
	}
}

// preview asks the service what the write would do and issues a ticket.
func (r *Router) preview(ctx context.Context, c *call) (*mcp.CallToolResult, string) {
	p, fail, outcome := r.previewed(ctx, c)
	if fail != nil {
		return fail, outcome
	}
	if denied := r.reconsider(ctx, c, p.facts); denied != nil {
		return denied, "denied"
	}
	return r.issue(c, p)
}

// reconsider asks the policy again now that the preview has run, with the
// facts it reported (or none), and keeps the stricter of the two decisions:
// facts can raise the approval a write needs, never lower it. It returns
// the failure to answer when the write is now denied.
func (r *Router) reconsider(ctx context.Context, c *call, facts approval.Facts) *mcp.CallToolResult {
	in := r.input(c.id, c.e, policy.ActionCall, c.args, policy.Ticket{State: "none", Force: c.force})
	in.Preview = &policy.Preview{Facts: facts}
	d, err := r.deps.Policy.Decide(ctx, in)
	if err == nil {
		err = policy.Validate(d)
	}
	if err != nil {
		r.log.Error("policy failed; denying", "error", err)
		d = policy.Decision{Decision: policy.Deny, Approval: approval.Model, Reason: policyFailure(err), ReasonID: policyFailureID(err)}
	}
	if final := policy.Stricter(c.decision, d); final != c.decision {
		c.decision = final
		r.deps.Audit.Log(r.record(c, audit.EventDecision, "preview_facts", 0))
	}
	if c.decision.Decision == policy.Deny {
		return errorResult(toolerr.New(toolerr.Forbidden, "denied by policy: %s", c.decision.Reason))
	}
	return nil
}

// issue stores a ticket for a checked preview and answers with it.
func (r *Router) issue(c *call, p previewResult) (*mcp.CallToolResult, string) {
	kind := c.decision.Approval
	if kind != approval.Human {
		kind = approval.Model
	}
	ttl := time.Duration(c.decision.TTLSeconds) * time.Second
	opts := []tickets.IssueOption{tickets.WithReason(c.decision.Reason)}
	if p.facts != nil {
		raw, err := json.Marshal(p.facts)
		if err != nil {
			return errorResult(toolerr.Wrap(toolerr.Internal, err, "could not keep the preview facts")), string(toolerr.Internal)
		}
		opts = append(opts, tickets.WithFacts(raw))
	}
	t, err := r.deps.Tickets.Issue(r.binding(c), p.digest, kind, ttl, p.body, opts...)
	if err != nil {
		return errorResult(toolerr.Wrap(toolerr.Busy, err, "too many open tickets; try again later")), string(toolerr.Busy)
	}
	c.ticket = t.ID
	r.deps.Metrics.Ticket("issued")
	rec := r.record(c, audit.EventTicket, "issued", 0)
	rec.Approval = kind
	// The call's outcome line follows before the answer leaves and takes
	// this one with it in one write. A ticket that waits for a person is
	// on record before anyone is told of it.
	rec.Sync = kind == approval.Human
	r.deps.Audit.Log(rec)
	if kind == approval.Human {
		r.deps.Metrics.Ticket("pending")
		if r.deps.OnPending != nil {
			r.deps.OnPending(t)
		}
	}
	body := map[string]any{
		"status":     "confirmation_required",
		"tool":       c.e.offered.Name,
		"ticket":     t.ID,
		"expires_at": t.Expires.UTC().Format(time.RFC3339),
		"approval":   kind,
		"reason":     c.decision.Reason,
		"preview":    p.body,
		"next":       nextStep(c.e.offered.Name, t.ID, kind, c.viaDiscovery),
	}
	if p.facts != nil {
		body["facts"] = p.facts
	}
	return success(body), "preview"
}

func nextStep(tool, ticket string, kind approval.Kind, viaDiscovery bool) string {
	again := "call " + tool + " again with exactly the same arguments"
	if viaDiscovery {
		again = fmt.Sprintf("call %s again with name %q and exactly the same arguments", toolCall, tool)
	}
	s := fmt.Sprintf("Nothing has changed yet. Show this preview to the user and ask for explicit consent. "+
		"Only if the user agrees, %s plus \"confirm\": true and \"ticket\": %q.", again, ticket)
	if kind == approval.Human {
		s += fmt.Sprintf(" This write also needs a person's approval outside this chat "+
			"(the gateway's approval page, or `gateway approvals approve %s`); a confirm from the assistant alone is not consent.", ticket)
	}
	return s
}

func (r *Router) applyWithoutTicket(ctx context.Context, c *call) (*mcp.CallToolResult, string) {
	p, fail, outcome := r.previewed(ctx, c)
	if fail != nil {
		return fail, outcome
	}
	if denied := r.reconsider(ctx, c, p.facts); denied != nil {
		return denied, "denied"
	}
	if c.decision.Decision != policy.Allow {
		// The preview showed more than a low-risk write (a lock behind a
		// "turn on"): it needs a ticket like any other write.
		return r.issue(c, p)
	}
	c.ticket = "auto_" + randomID()
	return r.apply(ctx, c, p.digest, r.deps.Now().Add(time.Minute))
}

// confirmTicket redeems the ticket and applies the write.
func (r *Router) confirmTicket(ctx context.Context, c *call) (*mcp.CallToolResult, string) {
	// A ticket issued for the model's consent cannot carry a write the
	// policy now wants a person for (data changed since the preview).
	if c.held != nil && c.decision.Approval == approval.Human && c.held.Approval != approval.Human {
		r.deps.Metrics.Ticket("rejected")
		return errorResult(toolerr.New(toolerr.Forbidden,
			"the policy now requires a person's approval for this write; nothing was changed — call without confirm for a new preview")), "ticket_rejected"
	}
	t, err := r.deps.Tickets.Redeem(c.ticket, r.binding(c))
	switch {
	case err == nil:
	case errors.Is(err, tickets.ErrPending):
		r.deps.Metrics.Ticket("pending")
		return success(map[string]any{
			"status":  "pending",
			"ticket":  c.ticket,
			"applied": false,
			"message": "Nothing was changed. This ticket waits for a person's approval outside this chat; confirm again after it was approved.",
		}), "pending"
	case errors.Is(err, tickets.ErrExpired):
		r.deps.Metrics.Ticket("expired")
		return errorResult(toolerr.New(toolerr.Forbidden, "the ticket has expired; nothing was changed — call without confirm for a new preview")), "ticket_expired"
	default:
		r.deps.Metrics.Ticket("rejected")
		return errorResult(toolerr.New(toolerr.Forbidden, "ticket refused: %s; nothing was changed — %s", err, ticketHint(err))), "ticket_rejected"
	}
	r.deps.Metrics.Ticket("confirmed")
	return r.apply(ctx, c, t.PreviewDigest, t.Expires)
}

func ticketHint(err error) string {
	switch {
	case errors.Is(err, tickets.ErrMismatch):
		return "a ticket only confirms the exact call it was issued for (same client, user, tool, arguments and force)"
	case errors.Is(err, tickets.ErrUsed):
		return "a ticket confirms one call only"
	case errors.Is(err, tickets.ErrDenied):
		return "a person denied this write"
	default:
		return "call without confirm for a new preview"
	}
}

// apply signs an approval for the service, bound to the call's ticket,
// and forwards the call.
func (r *Router) apply(ctx context.Context, c *call, previewDigest string, expires time.Time) (*mcp.CallToolResult, string) {
	// The approval lives just long enough for this call.
	if limit := r.deps.Now().Add(r.cfg.CallTimeout + 30*time.Second); expires.After(limit) {
		expires = limit
	}
	token, err := r.deps.Signer.Sign(approval.Approval{
		Service: c.e.service, Tool: c.e.upstream.Name, ArgsDigest: c.argsDigest,
		PreviewDigest: previewDigest, TicketID: c.ticket, Force: c.force, Expires: expires.Unix(),
	})
	if err != nil {
		return errorResult(toolerr.Wrap(toolerr.Internal, err, "could not sign the approval")), string(toolerr.Internal)
	}
	return r.forward(ctx, c, map[string]any{approval.MetaApproval: token}, false)
}

// forward sends the call to the service and returns a clean result: only
// content, structured content and isError leave (upstream _meta, result
// types and server info stay behind), capped in size.
func (r *Router) forward(ctx context.Context, c *call, meta map[string]any, retry bool) (*mcp.CallToolResult, string) {
	b := r.backends[c.e.service]
	ctx, cancel := context.WithTimeout(ctx, r.cfg.CallTimeout)
	defer cancel()
	res, err := b.Call(ctx, c.e.upstream.Name, c.args, meta, retry)
	if err != nil {
		r.noticeFailure(c.e.service, err)
		return errorResult(err), string(toolerr.CodeOf(err))
	}
	if res == nil {
		return errorResult(toolerr.New(toolerr.UpstreamUnavailable, "service %s returned no result", c.e.service)), string(toolerr.UpstreamUnavailable)
	}
	return r.clean(res)
}

// clean keeps what may leave of a service's result and caps it.
func (r *Router) clean(res *mcp.CallToolResult) (*mcp.CallToolResult, string) {
	out := &mcp.CallToolResult{Content: res.Content, StructuredContent: res.StructuredContent, IsError: res.IsError}
	if len(res.RawStructuredContent) > 0 {
		out.StructuredContent = res.RawStructuredContent
	}
	if res.Meta != nil {
		// Only the preview digest and facts are kept, for the gateway itself.
		keep := map[string]any{}
		for _, k := range []string{approval.MetaPreviewDigest, approval.MetaPreviewFacts} {
			if v, ok := res.Meta.AdditionalFields[k]; ok {
				keep[k] = v
			}
		}
		if len(keep) > 0 {
			out.Meta = &mcp.Meta{AdditionalFields: keep}
		}
	}
	out = capResult(out, r.cfg.MaxResultBytes)
	outcome := "ok"
	if out.IsError {
		outcome = errorCode(out)
	}
	return out, outcome
}

func errorCode(res *mcp.CallToolResult) string {
	raw, err := json.Marshal(res.StructuredContent)
	if err == nil {
		var body struct {
			Error struct {
				Code string `json:"code"`
			} `json:"error"`
		}
		if json.Unmarshal(raw, &body) == nil && body.Error.Code != "" {
			return body.Error.Code
		}
	}
	return "error"
}

// capResult enforces the gateway's byte cap on a result. Text is cut on a
// UTF-8 boundary with an explicit marker; structured content that does not
// fit is replaced by a note, never cut into invalid JSON.
func capResult(res *mcp.CallToolResult, max int) *mcp.CallToolResult {
	size := 0
	for _, c := range res.Content {
		if t, ok := c.(mcp.TextContent); ok {
			size += len(t.Text)
		} else if b, err := json.Marshal(c); err == nil {
			size += len(b)
		}
	}
	var structured []byte
	if res.StructuredContent != nil {
		structured, _ = json.Marshal(res.StructuredContent)
		size += len(structured)
	}
	if size <= max {
		return res
	}
	budget := max
	// The preview digest stays behind: a cut preview gets no ticket.
	out := &mcp.CallToolResult{IsError: res.IsError}
	note := fmt.Sprintf("[toolgate: truncated: the result had %d bytes, over the gateway's cap of %d; narrow the request]", size, max)
	for _, c := range res.Content {
		t, ok := c.(mcp.TextContent)
		if !ok {
			continue
		}
		keep := budget / 2
		if len(t.Text) > keep {
			t.Text = truncate.String(t.Text, keep) + "\n" + note
		}
		budget -= len(t.Text)
		out.Content = append(out.Content, t)
		if budget <= 0 {
			break
		}
	}
	if len(out.Content) == 0 {
		out.Content = []mcp.Content{mcp.NewTextContent(note)}
	}
	if structured != nil {
		out.StructuredContent = map[string]any{"truncated": true, "total_bytes": size, "note": note}
	}
	return out
}

func success(body map[string]any) *mcp.CallToolResult {
	res, err := toolkit.Success(body, 0)
	if err != nil {
		return errorResult(toolerr.Wrap(toolerr.Internal, err, "could not encode the answer"))
	}
	return res
}

func (r *Router) record(c *call, event, outcome string, bytes int) audit.Record {
	rec := audit.Record{
		Time: r.deps.Now().UTC(), Event: event, Client: c.id.Client.Name, User: c.id.User, UserRole: c.id.UserRole,
		Endpoint: endpointPath(c.endpoint), Service: c.e.service, Tool: c.e.upstream.Name, Phase: phase(c),
		Decision: c.decision.Decision, Reason: c.decision.Reason, ReasonID: c.decision.ReasonID,
		Approval: c.decision.Approval, TicketID: c.ticket, ArgsDigest: c.argsDigest, Outcome: outcome, Bytes: bytes,
		// Lines about writes reach the sink before the gateway goes on;
		// reads may wait for the next batch.
		Sync: c.e.write,
	}
	if event == audit.EventOutcome {
		rec.DurationMS = float64(r.deps.Now().Sub(c.start).Microseconds()) / 1000
		// For the audit's tap (the operator console) only; never written.
		rec.Args = c.canonical
	}
	return rec
}

// phase is what the call was, for the audit line.
func phase(c *call) string {
	switch {
	case !c.e.write:
		return audit.PhaseRead
	case c.confirm:
		return audit.PhaseConfirm
	case strings.HasPrefix(c.ticket, "auto_"):
		return audit.PhaseApply
	}
	return audit.PhasePreview
}

// endpointPath is an endpoint as a client addresses it.
func endpointPath(endpoint string) string {
	if endpoint == "" {
		return "/mcp"
	}
	return "/mcp/" + endpoint
}

// finish records the call. A nil res is a result passed through (c.direct).
func (r *Router) finish(c *call, res *mcp.CallToolResult, outcome string) {
	n := c.textBytes
	for _, ct := range resContent(res) {
		if t, ok := ct.(mcp.TextContent); ok {
			n += len(t.Text)
		}
	}
	r.deps.Audit.Log(r.record(c, audit.EventOutcome, outcome, n))
	d := c.decision.Decision
	if d == "" {
		d = "none"
	}
	r.deps.Metrics.ObserveCall(c.e.service, c.e.upstream.Name, d, outcome, r.deps.Now().Sub(c.start))
}

func resContent(res *mcp.CallToolResult) []mcp.Content {
	if res == nil {
		return nil
	}
	return res.Content
}

func randomID() string {
	var b [15]byte
	_, _ = rand.Read(b[:])
	return strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:]))
}

// policyFailure is the reason given for a call refused because the policy
// failed: an unreachable sidecar is temporary, so the client is told the
// call may work again later rather than that it is forbidden for good.
// policyFailureID is policyFailure's reason id.
func policyFailureID(err error) string {
	if errors.Is(err, policy.ErrUnavailable) {
		return policy.ReasonUnavailable
	}
	return policy.ReasonFailed
}

func policyFailure(err error) string {
	if errors.Is(err, policy.ErrUnavailable) {
		return "the policy service is unavailable, so every call is refused until it answers again; nothing was run"
	}
	return "the policy could not be evaluated"
}
