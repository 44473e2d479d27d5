package toolkit_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/internal/toolkit/toolkittest"
)

// imageTool returns a picture of n bytes as an Image (pointer or value).
func imageTool(n int, pointer bool) toolkit.Tool {
	return toolkit.Tool{
		Name: "pic_get", Description: "Return a picture.",
		Schema:      json.RawMessage(`{"type":"object","additionalProperties":false}`),
		Annotations: toolkit.Annotations{ReadOnly: true, Idempotent: true},
		Read: func(context.Context, toolkit.Args) (any, error) {
			img := toolkit.Image{MIMEType: "image/jpeg", Data: bytes.Repeat([]byte{0xff}, n), Details: map[string]any{"camera": "door", "bytes": n}}
			if pointer {
				return &img, nil
			}
			return img, nil
		},
	}
}

func TestImageResult(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		size     int
		pointer  bool
		wantCode string // "" means success
	}{
		{name: "pointer", size: 300, pointer: true},
		{name: "value", size: 300},
		{name: "over the result cap", size: toolkit.DefaultMaxResultBytes, wantCode: "too_large"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			svc := toolkittest.Start(t, "pic", []toolkit.Tool{imageTool(tc.size, tc.pointer)})
			req := mcp.CallToolRequest{}
			req.Params.Name = "pic_get"
			res, err := svc.Client.CallTool(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantCode != "" {
				got, _ := json.Marshal(res.StructuredContent)
				if !res.IsError || !bytes.Contains(got, []byte(tc.wantCode)) {
					t.Fatalf("want %s, got %s", tc.wantCode, got)
				}
				return
			}
			var text, img int
			for _, c := range res.Content {
				switch c := c.(type) {
				case mcp.TextContent:
					text++
					if !bytes.Contains([]byte(c.Text), []byte(`"camera":"door"`)) {
						t.Errorf("text mirror lacks the details: %s", c.Text)
					}
				case mcp.ImageContent:
					img++
					data, err := base64.StdEncoding.DecodeString(c.Data)
					if err != nil || len(data) != tc.size || c.MIMEType != "image/jpeg" {
						t.Errorf("image: %d bytes, %s, %v", len(data), c.MIMEType, err)
					}
				}
			}
			if text != 1 || img != 1 || res.IsError {
				t.Fatalf("want one text and one image, got %d and %d (isError %v)", text, img, res.IsError)
			}
		})
	}
}
