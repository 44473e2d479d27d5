package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"
	"unicode/utf16"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/services/gateway/pins"
	"github.com/toolgate/toolgate/services/gateway/tickets"
)

// Usage describes the subcommands CLI.Run understands.
const Usage = `usage:
  approvals list [--all]            tickets waiting for a person (--all: every live ticket)
  approvals show ID                 one ticket with the preview of what it would change
  approvals approve ID [--by NAME]  let the client confirm the ticket
  approvals deny ID [--by NAME]     refuse the ticket for good
  pins list                         definitions withheld because they changed, each with its diff
  pins show SERVICE TOOL            one withheld definition in full, with its diff
  pins accept SERVICE TOOL HASH     accept the definition you reviewed (HASH as list/show print it)
  pins reject SERVICE TOOL HASH     keep the definition you reviewed withheld and stop asking about it
                                    TOOL is @instructions for a service's instructions
  policy explain --client NAME [--user USER [--role ROLE]] [--endpoint /mcp/NAME] [--json] TOOL [ARGS]
                                    what a call of TOOL with ARGS (a JSON object) would meet: the
                                    decision, its reason and reason id, and whether a person is asked
  endpoints list [--refresh]        per client token, the endpoints (/mcp/<name>) that show it tools
                                    (--refresh: read every service's tools again first)`

// Errors of CLI.Run; check them with errors.Is.
var (
	// ErrUsage is wrapped by every error about the command line itself; its
	// message carries Usage.
	ErrUsage = errors.New("invalid command")
	// ErrUnauthorized means the admin API refused the token.
	ErrUnauthorized = errors.New("the admin API rejected the admin token (HTTP 401): check that this command and the gateway read the same admin token")
)

// APIError is an error answer of the admin API.
type APIError struct {
	Status  int
	Code    toolerr.Code
	Message string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("admin API: %s (HTTP %d): %s", e.Code, e.Status, display(e.Message))
}

const maxReplyBytes = 32 << 20

// CLI is the command-line client of the admin API.
type CLI struct {
	// BaseURL is the admin API, e.g. "http://127.0.0.1:8081"; empty means
	// DefaultAddr over HTTP.
	BaseURL string
	// Token is the admin token; surrounding white space is ignored.
	Token []byte
	// HTTPClient defaults to a client with a 30 s timeout.
	HTTPClient *http.Client
	// Out receives the output; nil means os.Stdout.
	Out io.Writer
}

// Run executes one subcommand, e.g. []string{"approvals", "list"}.
func (c *CLI) Run(ctx context.Context, args []string) error {
	if len(args) < 2 {
		return usageError("missing subcommand")
	}
	switch args[0] + " " + args[1] {
	case "approvals list":
		return c.listTickets(ctx, args[2:])
	case "approvals show":
		return c.showTicket(ctx, args[2:])
	case "approvals approve":
		return c.decide(ctx, "approve", args[2:])
	case "approvals deny":
		return c.decide(ctx, "deny", args[2:])
	case "pins list":
		return c.listPins(ctx, args[2:])
	case "pins show":
		return c.showPin(ctx, args[2:])
	case "pins accept":
		return c.decidePin(ctx, "accept", args[2:])
	case "pins reject":
		return c.decidePin(ctx, "reject", args[2:])
	case "policy explain":
		return c.explainCmd(ctx, args[2:])
	case "endpoints list":
		return c.listEndpoints(ctx, args[2:])
	}
	return usageError(fmt.Sprintf("unknown subcommand %q", display(strings.Join(args[:2], " "))))
}

func usageError(msg string) error {
	return fmt.Errorf("%w: %s\n%s", ErrUsage, msg, Usage)
}

// parseArgs splits args into positionals and the flags named in withValue
// (which take a value) or bare (which do not); flags may come anywhere and
// be spelt -x, --x or --x=value.
func parseArgs(args []string, withValue, bare []string) (pos []string, flags map[string]string, err error) {
	flags = map[string]string{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			pos = append(pos, a)
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch {
		case contains(withValue, name):
			if !hasVal {
				if i+1 >= len(args) {
					return nil, nil, usageError("flag --" + name + " needs a value")
				}
				i++
				val = args[i]
			}
			flags[name] = val
		case contains(bare, name) && !hasVal:
			flags[name] = "true"
		default:
			return nil, nil, usageError(fmt.Sprintf("unknown flag %q", display(a)))
		}
	}
	return pos, flags, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func (c *CLI) listTickets(ctx context.Context, args []string) error {
	pos, flags, err := parseArgs(args, nil, []string{"all"})
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usageError("approvals list takes no arguments")
	}
	path := "/admin/tickets?state=pending"
	if flags["all"] != "" {
		path = "/admin/tickets"
	}
	var reply TicketList
	if err := c.do(ctx, http.MethodGet, path, nil, &reply); err != nil {
		return err
	}
	out := c.out()
	if len(reply.Tickets) == 0 {
		if flags["all"] != "" {
			_, err := fmt.Fprintln(out, "no live tickets")
			return err
		}
		_, err := fmt.Fprintln(out, "no tickets waiting for approval")
		return err
	}
	now := time.Now()
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tAGE\tEXPIRES\tCLIENT\tUSER\tSERVICE\tTOOL\tAPPROVAL\tSTATE")
	for _, t := range reply.Tickets {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
			cell(t.ID), age(now.Sub(t.Created)), expiry(t.Expires.Sub(now)), cell(t.Client), cell(t.User),
			cell(t.Service), cell(t.Tool), cell(string(t.Approval)), cell(string(t.State)))
	}
	return tw.Flush()
}

func (c *CLI) showTicket(ctx context.Context, args []string) error {
	pos, _, err := parseArgs(args, nil, nil)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageError("approvals show takes one ticket id")
	}
	id, err := checkID(pos[0])
	if err != nil {
		return err
	}
	var reply TicketReply
	if err := c.do(ctx, http.MethodGet, "/admin/tickets/"+url.PathEscape(id), nil, &reply); err != nil {
		return err
	}
	return printTicket(c.out(), reply.Ticket, time.Now())
}

func (c *CLI) decide(ctx context.Context, verb string, args []string) error {
	pos, flags, err := parseArgs(args, []string{"by"}, nil)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageError("approvals " + verb + " takes one ticket id")
	}
	id, err := checkID(pos[0])
	if err != nil {
		return err
	}
	var body any
	if by, ok := flags["by"]; ok {
		body = decisionBody{By: &by}
	}
	var reply TicketReply
	if err := c.do(ctx, http.MethodPost, "/admin/tickets/"+url.PathEscape(id)+"/"+verb, body, &reply); err != nil {
		return err
	}
	t := reply.Ticket
	word := "approved"
	if verb == "deny" {
		word = "denied"
	}
	_, err = fmt.Fprintf(c.out(), "%s %s (%s/%s for client %s, user %s) by %s\n", word,
		display(t.ID), display(t.Service), display(t.Tool), cell(t.Client), cell(t.User), display(t.DecidedBy))
	return err
}

func (c *CLI) listPins(ctx context.Context, args []string) error {
	pos, _, err := parseArgs(args, nil, nil)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usageError("pins list takes no arguments")
	}
	var reply PinList
	if err := c.do(ctx, http.MethodGet, "/admin/pins", nil, &reply); err != nil {
		return err
	}
	out := c.out()
	if len(reply.Pending) == 0 {
		_, err := fmt.Fprintln(out, "no changed definitions waiting")
		return err
	}
	for i, p := range reply.Pending {
		if i > 0 {
			fmt.Fprintln(out)
		}
		// The diff is the review; without a recorded pinned definition the
		// whole pending one is.
		if err := printPin(out, p, p.Diff == ""); err != nil {
			return err
		}
	}
	return nil
}

func (c *CLI) showPin(ctx context.Context, args []string) error {
	service, tool, err := pinArgs("pins show", args, 2)
	if err != nil {
		return err
	}
	var reply PinReply
	if err := c.do(ctx, http.MethodGet, "/admin/pins/"+url.PathEscape(service)+"/"+url.PathEscape(tool), nil, &reply); err != nil {
		return err
	}
	return printPin(c.out(), reply.Pending, true)
}

// pinArgs checks SERVICE TOOL [HASH].
func pinArgs(cmd string, args []string, n int) (string, string, error) {
	pos, _, err := parseArgs(args, nil, nil)
	if err != nil {
		return "", "", err
	}
	if len(pos) != n {
		if n == 3 {
			return "", "", usageError(cmd + " takes a service, a tool and the hash you reviewed (pins list shows it)")
		}
		return "", "", usageError(cmd + " takes a service and a tool")
	}
	service, tool := pos[0], pos[1]
	if !validName(service) || !validName(tool) || service == "." || service == ".." || tool == "." || tool == ".." {
		return "", "", usageError("invalid service or tool name")
	}
	return service, tool, nil
}

// printPin shows a withheld definition: what it is, the command that
// accepts exactly it, its diff, and (full) the whole pending definition.
// Every line is escaped for the terminal: a hostile service writes these.
func printPin(out io.Writer, p PinChange, full bool) error {
	what := "tool " + display(p.Tool)
	if p.Tool == pins.Instructions {
		what = "instructions"
	}
	fmt.Fprintf(out, "%s %s changed\n", display(p.Service), what)
	fmt.Fprintf(out, "  pinned:  %s\n  pending: %s\n", cell(p.Pinned), cell(p.Current))
	fmt.Fprintf(out, "  accept:  gateway pins accept %s %s %s\n", display(p.Service), display(p.Tool), display(p.Current))
	if p.Rejected {
		fmt.Fprintln(out, "  rejected: you rejected this definition; it stays withheld (accept it to offer it after all)")
	} else {
		fmt.Fprintf(out, "  reject:  gateway pins reject %s %s %s\n", display(p.Service), display(p.Tool), display(p.Current))
	}
	if p.Diff != "" {
		fmt.Fprintln(out, "Diff (pinned → pending):")
		writeLines(out, p.Diff)
	} else {
		fmt.Fprintln(out, "Diff: not available (the pinned definition was recorded by an older gateway, which kept only its hash)")
	}
	if full {
		fmt.Fprintln(out, "Pending definition:")
		writeLines(out, pins.Render(p.CurrentDefinition))
	}
	return nil
}

func writeLines(out io.Writer, text string) {
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		fmt.Fprintf(out, "  %s\n", display(line))
	}
}

func (c *CLI) decidePin(ctx context.Context, verb string, args []string) error {
	service, tool, err := pinArgs("pins "+verb, args, 3)
	if err != nil {
		return err
	}
	pos, _, _ := parseArgs(args, nil, nil)
	path := "/admin/pins/" + url.PathEscape(service) + "/" + url.PathEscape(tool) + "/" + verb
	var reply PinAccepted
	if err := c.do(ctx, http.MethodPost, path, acceptBody{Hash: pos[2]}, &reply); err != nil {
		return err
	}
	if verb == "reject" {
		_, err = fmt.Fprintf(c.out(), "rejected %s of %s/%s; it stays withheld until the service changes it again\n", display(reply.Hash), display(reply.Service), display(reply.Tool))
		return err
	}
	_, err = fmt.Fprintf(c.out(), "accepted %s of %s/%s; it is offered from the next refresh\n", display(reply.Hash), display(reply.Service), display(reply.Tool))
	return err
}

func checkID(id string) (string, error) {
	if !idPattern.MatchString(id) {
		return "", usageError("invalid ticket id")
	}
	return id, nil
}

func (c *CLI) out() io.Writer {
	if c.Out == nil {
		return os.Stdout
	}
	return c.Out
}

// do sends one request and decodes the JSON answer into reply. Errors never
// contain the token.
func (c *CLI) do(ctx context.Context, method, path string, body, reply any) error {
	token := bytes.TrimSpace(c.Token)
	if len(token) == 0 {
		return errors.New("no admin token given")
	}
	for _, b := range token {
		if b <= ' ' || b == 0x7f {
			return errors.New("the admin token contains white space or control characters")
		}
	}
	base := strings.TrimRight(c.BaseURL, "/")
	if base == "" {
		base = "http://" + DefaultAddr
	}
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("encode request: %w", err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, base+path, rd)
	if err != nil {
		return fmt.Errorf("admin API address %q: %w", display(base), err)
	}
	req.Header.Set("Authorization", "Bearer "+string(token))
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	client := c.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Second}
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("cannot reach the admin API: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxReplyBytes+1))
	if err != nil {
		return fmt.Errorf("read admin API answer: %w", err)
	}
	if len(data) > maxReplyBytes {
		return fmt.Errorf("admin API answer is larger than %d bytes", maxReplyBytes)
	}
	if resp.StatusCode == http.StatusUnauthorized {
		return ErrUnauthorized
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		var e ErrorReply
		if json.Unmarshal(data, &e) == nil && e.Error.Code != "" {
			return &APIError{Status: resp.StatusCode, Code: e.Error.Code, Message: e.Error.Message}
		}
		return &APIError{Status: resp.StatusCode, Code: toolerr.Internal, Message: "unexpected answer " + resp.Status}
	}
	if err := json.Unmarshal(data, reply); err != nil {
		return fmt.Errorf("admin API answer is not the expected JSON: %w", err)
	}
	return nil
}

// printTicket shows everything a person needs before deciding.
func printTicket(out io.Writer, t tickets.Ticket, now time.Time) error {
	state := string(t.State)
	switch {
	case !now.Before(t.Expires):
		state += " (expired)"
	case t.State == tickets.Pending:
		state += " (waits for a person's approval)"
	}
	tw := tabwriter.NewWriter(out, 0, 4, 1, ' ', 0)
	rows := [][2]string{
		{"Ticket", display(t.ID)},
		{"State", display(state)},
		{"Approval", cell(string(t.Approval))},
		{"Client", cell(t.Client)},
		{"User", cell(t.User)},
		{"Service", cell(t.Service)},
		{"Tool", cell(t.Tool)},
		{"Force", fmt.Sprint(t.Force)},
		{"Created", t.Created.Local().Format(time.RFC3339) + " (" + age(now.Sub(t.Created)) + " ago)"},
		{"Expires", t.Expires.Local().Format(time.RFC3339) + " (" + expiry(t.Expires.Sub(now)) + ")"},
	}
	if t.Reason != "" {
		rows = append(rows, [2]string{"Reason", display(t.Reason)})
	}
	if t.DecidedBy != "" {
		rows = append(rows, [2]string{"Decided by", display(t.DecidedBy)})
	}
	rows = append(rows,
		[2]string{"Args digest", cell(t.ArgsDigest)},
		[2]string{"Preview digest", cell(t.PreviewDigest)})
	for _, r := range rows {
		fmt.Fprintf(tw, "%s:\t%s\n", r[0], r[1])
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(out, "Preview:\n%s\n", prettyJSON(t.Preview))
	return err
}

// prettyJSON indents a preview. Invisible and control characters inside
// strings are written as \u escapes (still valid JSON), so what a person
// reads is exactly what the ticket holds.
func prettyJSON(raw json.RawMessage) string {
	if len(bytes.TrimSpace(raw)) == 0 {
		return "(none)"
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return display(string(raw))
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return display(string(raw))
	}
	var b strings.Builder
	for _, r := range strings.TrimRight(buf.String(), "\n") {
		if r != '\n' && hidden(r) {
			writeEscape(&b, r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func hidden(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == unicode.ReplacementChar ||
		r == '\u2028' || r == '\u2029'
}

func writeEscape(b *strings.Builder, r rune) {
	if r > 0xffff {
		r1, r2 := utf16.EncodeRune(r)
		fmt.Fprintf(b, `\u%04x\u%04x`, r1, r2)
		return
	}
	fmt.Fprintf(b, `\u%04x`, r)
}

// display makes text from the gateway safe for a terminal: control and
// invisible characters (escape sequences, bidi overrides) become \u escapes.
func display(s string) string {
	var b strings.Builder
	for _, r := range strings.ToValidUTF8(s, "\ufffd") {
		if hidden(r) && r != unicode.ReplacementChar {
			writeEscape(&b, r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// cell is display for a table cell: empty becomes "-" and tabs cannot
// shift the columns (display already escapes them).
func cell(s string) string {
	if s == "" {
		return "-"
	}
	return display(s)
}

func age(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	return d.Round(time.Second).String()
}

func expiry(left time.Duration) string {
	if left <= 0 {
		return "expired"
	}
	return "in " + left.Round(time.Second).String()
}
