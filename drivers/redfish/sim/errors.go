package sim

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
)

// ErrUnknownSystem is returned by the accessors when no system has the id.
var ErrUnknownSystem = errors.New("sim: unknown system")

// registry prefixes every MessageId; Base 1.8 has every message used here.
const registry = "Base.1.8."

// message is one entry of @Message.ExtendedInfo.
type message struct {
	ID   string   // short id within the Base registry, e.g. "PropertyValueNotInList"
	Text string   // human-readable
	Args []string // MessageArgs
}

// apiError is an HTTP status plus the messages that explain it.
type apiError struct {
	Status   int
	Messages []message
	Header   http.Header // extra response headers (Retry-After, WWW-Authenticate)
}

func (e *apiError) Error() string {
	if len(e.Messages) == 0 {
		return http.StatusText(e.Status)
	}
	return e.Messages[0].Text
}

func newError(status int, id, text string, args ...string) *apiError {
	return &apiError{Status: status, Messages: []message{{ID: id, Text: text, Args: args}}}
}

// join merges several 400s about one request into one answer, as a BMC does
// when a PATCH names several bad properties.
func join(errs []*apiError) *apiError {
	if len(errs) == 1 {
		return errs[0]
	}
	out := &apiError{Status: errs[0].Status}
	for _, e := range errs {
		out.Messages = append(out.Messages, e.Messages...)
	}
	return out
}

// writeError answers with e in the Redfish error shape.
func writeError(w http.ResponseWriter, e *apiError) {
	for k, vs := range e.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	infos := make([]obj, 0, len(e.Messages))
	for _, m := range e.Messages {
		info := obj{
			"@odata.type": "#Message.v1_1_1.Message",
			"MessageId":   registry + m.ID,
			"Message":     m.Text,
			"Severity":    "Warning",
			"Resolution":  "See the message and correct the request.",
		}
		if len(m.Args) > 0 {
			info["MessageArgs"] = m.Args
		}
		if e.Status >= 500 {
			info["Severity"] = "Critical"
			info["Resolution"] = "Retry the request; if the problem persists, reset the service."
		}
		infos = append(infos, info)
	}
	writeJSON(w, e.Status, obj{"error": obj{
		"code":                  registry + "GeneralError",
		"message":               e.Error(),
		"@Message.ExtendedInfo": infos,
	}})
}

// The constructors below name the Base registry message each answer uses.

func errNotFound(uri string) *apiError {
	return newError(http.StatusNotFound, "ResourceMissingAtURI",
		fmt.Sprintf("The resource at the URI %s was not found.", uri), uri)
}

func errMethod(method, uri string, allow string) *apiError {
	e := newError(http.StatusMethodNotAllowed, "GeneralError",
		fmt.Sprintf("The method %s is not allowed on %s.", method, uri))
	e.Header = http.Header{"Allow": {allow}}
	return e
}

func errUnauthorized(text string) *apiError {
	e := newError(http.StatusUnauthorized, "NoValidSession", text)
	e.Header = http.Header{"Www-Authenticate": {`Basic realm="rivet-sim"`}}
	return e
}

func errMalformed(text string) *apiError {
	return newError(http.StatusBadRequest, "MalformedJSON",
		"The request body submitted was malformed JSON and could not be parsed: "+text)
}

func errPropertyUnknown(name string) *apiError {
	return newError(http.StatusBadRequest, "PropertyUnknown",
		fmt.Sprintf("The property %s is not in the list of valid properties for the resource.", name), name)
}

func errPropertyNotWritable(name string) *apiError {
	return newError(http.StatusBadRequest, "PropertyNotWritable",
		fmt.Sprintf("The property %s is a read only property and cannot be assigned a value.", name), name)
}

func errPropertyValue(name, value string) *apiError {
	return newError(http.StatusBadRequest, "PropertyValueNotInList",
		fmt.Sprintf("The value %q for the property %s is not in the list of acceptable values.", value, name), value, name)
}

func errPropertyType(name, raw string) *apiError {
	return newError(http.StatusBadRequest, "PropertyValueTypeError",
		fmt.Sprintf("The value %s for the property %s is of a different type than the property can accept.", raw, name), raw, name)
}

func errPropertyFormat(name, value string) *apiError {
	return newError(http.StatusBadRequest, "PropertyValueFormatError",
		fmt.Sprintf("The value %q for the property %s is of a different format than the property can accept.", value, name), value, name)
}

func errParamMissing(action, param string) *apiError {
	return newError(http.StatusBadRequest, "ActionParameterMissing",
		fmt.Sprintf("The action %s requires the parameter %s to be present in the request body.", action, param), action, param)
}

func errParamUnknown(action, param string) *apiError {
	return newError(http.StatusBadRequest, "ActionParameterUnknown",
		fmt.Sprintf("The action %s was submitted with the invalid parameter %s.", action, param), action, param)
}

func errParamValue(action, param, value string) *apiError {
	return newError(http.StatusBadRequest, "ActionParameterNotSupported",
		fmt.Sprintf("The value %q for the parameter %s in the action %s is not supported on the target resource.", value, param, action), param, action)
}

func errParamFormat(action, param, value string) *apiError {
	return newError(http.StatusBadRequest, "ActionParameterValueFormatError",
		fmt.Sprintf("The value %q for the parameter %s in the action %s is of a different format than the parameter can accept.", value, param, action), value, param, action)
}

func errPrecondition(uri string) *apiError {
	return newError(http.StatusPreconditionFailed, "PreconditionFailed",
		fmt.Sprintf("The ETag supplied did not match the current ETag of %s.", uri))
}

func errConflict(id, text string) *apiError {
	return newError(http.StatusConflict, id, text)
}

func errSessionLimit(limit int) *apiError {
	e := newError(http.StatusServiceUnavailable, "SessionLimitExceeded",
		fmt.Sprintf("The session establishment failed due to the number of simultaneous sessions exceeding the limit of %d.", limit))
	e.Header = http.Header{"Retry-After": {strconv.Itoa(5)}}
	return e
}

func errInternal(text string) *apiError {
	return newError(http.StatusInternalServerError, "InternalError",
		"The request failed due to an internal service error: "+text)
}

func errShuttingDown() *apiError {
	return newError(http.StatusServiceUnavailable, "ServiceShuttingDown",
		"The operation failed because the service is shutting down and can no longer take incoming requests.")
}
