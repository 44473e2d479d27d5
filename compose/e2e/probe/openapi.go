package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// openapiFlow is what OpenWebUI does with a tool server: read the
// document, then POST JSON arguments to <server>/<operation path>.
func (r *report) openapiFlow(ctx context.Context, base string, auth bearer) {
	hc := &http.Client{Transport: auth, Timeout: 30 * time.Second}
	var doc struct {
		OpenAPI string `json:"openapi"`
		Paths   map[string]map[string]struct {
			OperationID string `json:"operationId"`
		} `json:"paths"`
	}
	err := retry(ctx, func() error {
		status, body, err := send(ctx, hc, http.MethodGet, base+"/openapi.json", nil)
		if err == nil && status != http.StatusOK {
			err = fmt.Errorf("HTTP %d: %.200s", status, body)
		}
		if err == nil {
			err = json.Unmarshal(body, &doc)
		}
		if err == nil && doc.Paths["/demo_counter_reset"]["post"].OperationID != "demo_counter_reset" {
			err = fmt.Errorf("no demo_counter_reset operation among %d paths", len(doc.Paths))
		}
		return err
	})
	if !r.check("OpenAPI document with the demo operations ("+doc.OpenAPI+")", err) {
		return
	}

	// A write the model may confirm: preview, then confirm with the ticket.
	prev, err := post(ctx, hc, base+"/demo_counter_add", map[string]any{"amount": 3})
	ticket, _ := prev["ticket"].(string)
	if err == nil && (prev["status"] != "confirmation_required" || ticket == "") {
		err = fmt.Errorf("want a preview and a ticket, got %v", prev)
	}
	if r.check("OpenAPI write answers a preview and a ticket", err) {
		done, err := post(ctx, hc, base+"/demo_counter_add", map[string]any{"amount": 3, "confirm": true, "ticket": ticket})
		if err == nil && done["status"] != "applied" {
			err = fmt.Errorf("confirm: %v", done)
		}
		r.check("OpenAPI confirm applies", err)
	}

	// A write that needs a person: the confirm waits until one approves it
	// on the approval page, then applies.
	prev, err = post(ctx, hc, base+"/demo_counter_reset", map[string]any{})
	ticket, _ = prev["ticket"].(string)
	if err == nil && (prev["approval"] != "human" || ticket == "") {
		err = fmt.Errorf("want a ticket for a person, got %v", prev)
	}
	if !r.check("OpenAPI write that needs a person gets a ticket", err) {
		return
	}
	fmt.Printf("waiting for approval of %s\n", ticket)
	confirm := map[string]any{"confirm": true, "ticket": ticket}
	sawPending := false
	for {
		done, err := post(ctx, hc, base+"/demo_counter_reset", confirm)
		if err != nil {
			r.check("confirm after a person's approval", err)
			return
		}
		switch done["status"] {
		case "pending":
			sawPending = true
			select {
			case <-ctx.Done():
				r.check("confirm after a person's approval", fmt.Errorf("nobody approved %s in time", ticket))
				return
			case <-time.After(time.Second):
			}
			continue
		case "applied":
			if !sawPending {
				err = fmt.Errorf("applied without ever waiting for a person")
			}
			r.check("confirm waits for the person, then applies", err)
			return
		default:
			r.check("confirm after a person's approval", fmt.Errorf("unexpected answer %v", done))
			return
		}
	}
}

func post(ctx context.Context, hc *http.Client, url string, args map[string]any) (map[string]any, error) {
	body, _ := json.Marshal(args)
	status, out, err := send(ctx, hc, http.MethodPost, url, body)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		return nil, fmt.Errorf("HTTP %d, not JSON: %.200s", status, out)
	}
	if status != http.StatusOK {
		return m, fmt.Errorf("HTTP %d: %.300s", status, out)
	}
	return m, nil
}

func send(ctx context.Context, hc *http.Client, method, url string, body []byte) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	out, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	return res.StatusCode, bytes.TrimSpace(out), err
}
