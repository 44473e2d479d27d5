package mcpwire

import (
	"encoding/json"
	"net/http"
	"strconv"
)

type ResponseError struct {
	Code int    `json:"code"`
	Msg  string `json:"message"`
}

// WriteResponse writes a JSON-RPC response with the request's id as it came.
func WriteResponse(w http.ResponseWriter, id json.RawMessage, result json.RawMessage, rerr *ResponseError) {
	out := make([]byte, 0, len(result)+64)
	out = append(out, `{"jsonrpc":"2.0","id":`...)
	out = append(out, id...)
	if rerr != nil {
		b, _ := json.Marshal(rerr)
		out = append(out, `,"error":`...)
		out = append(out, b...)
	} else {
		out = append(out, `,"result":`...)
		out = append(out, result...)
	}
	out = append(out, "}\n"...)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(out)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(out)
}

// MaxRequestBytes bounds one request body.
const MaxRequestBytes = 1 << 20

func WriteError(w http.ResponseWriter, status, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": code, "message": msg},
	})
}
