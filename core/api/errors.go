package api

import (
	"encoding/json"
	"net/http"
)

// faultBody is the inner document of an error raised by a resource handler
// (Ironic's method.format_exception).
type faultBody struct {
	FaultCode   string  `json:"faultcode"`
	FaultString string  `json:"faultstring"`
	DebugInfo   *string `json:"debuginfo"`
}

// routingBody is the inner document of an error raised while routing, such
// as the version check (webob's shape in Ironic).
type routingBody struct {
	Code        int    `json:"code"`
	Title       string `json:"title"`
	Description string `json:"description"`
}

// WriteFault writes Ironic's error body for a handler error:
// {"error_message": "{\"faultcode\": \"Client\", \"faultstring\": msg, \"debuginfo\": null}"}.
// faultcode is "Client" for 4xx and "Server" otherwise.
func WriteFault(w http.ResponseWriter, status int, msg string) {
	code := "Server"
	if status >= 400 && status < 500 {
		code = "Client"
	}
	writeErrorMessage(w, status, faultBody{FaultCode: code, FaultString: msg})
}

// writeRoutingError writes the webob-shaped error Ironic gives for checks
// that run before a handler (e.g. the microversion check on /v1 paths).
func writeRoutingError(w http.ResponseWriter, status int, description string) {
	writeErrorMessage(w, status, routingBody{Code: status, Title: http.StatusText(status), Description: description})
}

func writeErrorMessage(w http.ResponseWriter, status int, inner any) {
	innerJSON, _ := json.Marshal(inner)
	body, _ := json.Marshal(map[string]string{"error_message": string(innerJSON)})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
