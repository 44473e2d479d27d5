package arrfake

import (
	"encoding/json"
	"net/http"
	"strings"
)

// The error bodies below are the ones Sonarr.Http's error pipeline
// (SonarrErrorPipeline, ErrorModel; Radarr and Prowlarr carry the same
// code) and ASP.NET's API behaviour write, serialised as STJson does
// (camelCase, nulls left out). Fakes answer with them so the client's
// reading of an error is tested against what the applications send.

// ClientError answers an exception the pipeline maps to status
// (NzbDroneClientException, ModelNotFoundException → 404, an unexpected
// exception → 500): {"message", "description"}, where the description is
// the exception's ToString, stack trace and all.
func ClientError(w http.ResponseWriter, status int, exception, msg string) {
	WriteJSON(w, status, map[string]any{
		"message": msg,
		"description": exception + ": " + msg + "\n" +
			"   at NzbDrone.Api.Controllers.Handle(HttpContext context) in /build/src/Controllers.cs:line 42\n" +
			"   at Microsoft.AspNetCore.Mvc.Infrastructure.ActionMethodExecutor.Execute(ActionContext context)",
	})
}

// APIError answers an ApiException (BadRequestException and kin):
// {"message": "<status name>: content", "content": content}.
func APIError(w http.ResponseWriter, status int, content string) {
	name := strings.ReplaceAll(http.StatusText(status), " ", "")
	WriteJSON(w, status, map[string]any{"message": name + ": " + content, "content": content})
}

// NotFound answers what a controller's NotFound() becomes under ASP.NET's
// API behaviour (GET /series/{id} for an unknown id): a ProblemDetails
// that says no more than the status.
func NotFound(w http.ResponseWriter) {
	problem(w, http.StatusNotFound, map[string]any{
		"type": "https://tools.ietf.org/html/rfc9110#section-15.5.5", "title": "Not Found", "status": 404,
	})
}

// InvalidValue answers a query or route value that does not bind
// (page=abc): ASP.NET's validation ProblemDetails.
func InvalidValue(w http.ResponseWriter, name, value string) {
	problem(w, http.StatusBadRequest, map[string]any{
		"type": "https://tools.ietf.org/html/rfc9110#section-15.5.1", "title": "One or more validation errors occurred.", "status": 400,
		"errors": map[string][]string{name: {"The value '" + value + "' is not valid."}},
	})
}

func problem(w http.ResponseWriter, status int, body map[string]any) {
	body["traceId"] = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00"
	w.Header().Set("Content-Type", "application/problem+json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

// Failure is one FluentValidation failure.
type Failure struct {
	// Property is the resource's property (PascalCase: "IndexerId").
	Property string
	// Message is FluentValidation's text ("'Guid' must not be empty.").
	Message string
	// Attempted is the value that failed.
	Attempted any
}

// ValidationFailed answers a ValidationException: HTTP 400 with the list
// of failures as they serialise ({propertyName, errorMessage,
// attemptedValue, severity, errorCode, …}).
func ValidationFailed(w http.ResponseWriter, failures ...Failure) {
	out := make([]map[string]any, 0, len(failures))
	for _, f := range failures {
		m := map[string]any{
			"propertyName": f.Property, "errorMessage": f.Message, "severity": "error",
			"errorCode": "NotEmptyValidator", "formattedMessagePlaceholderValues": map[string]any{"PropertyName": f.Property},
		}
		if f.Attempted != nil {
			m["attemptedValue"] = f.Attempted
		}
		out = append(out, m)
	}
	WriteJSON(w, http.StatusBadRequest, out)
}
