package jsonrpc

import (
	"bytes"
	"encoding/json"
	"strings"
)

// MCP and A2A both speak JSON-RPC 2.0; these tell their traffic apart, so
// that each parser claims only its own (an exchange's request method
// decides; without one, the shape of the results).

// A2AMethod reports whether method is an A2A method: 0.3 (message/send,
// message/stream, tasks/get, …) or 1.0 (SendMessage, SendStreamingMessage,
// GetTask, …).
func A2AMethod(method string) bool {
	switch method {
	case "message/send", "message/stream", "tasks/get", "tasks/cancel", "tasks/resubscribe",
		"agent/getAuthenticatedExtendedCard",
		"SendMessage", "SendStreamingMessage", "GetTask", "ListTasks", "CancelTask",
		"SubscribeToTask", "GetExtendedAgentCard":
		return true
	}
	return strings.HasPrefix(method, "tasks/pushNotificationConfig/") ||
		strings.HasSuffix(method, "TaskPushNotificationConfig") || strings.HasSuffix(method, "TaskPushNotificationConfigs")
}

// MCPMethod reports whether method is an MCP method or notification.
func MCPMethod(method string) bool {
	switch method {
	case "initialize", "ping", "completion/complete", "logging/setLevel":
		return true
	}
	for _, p := range []string{"notifications/", "tools/", "resources/", "prompts/", "sampling/", "roots/", "elicitation/"} {
		if strings.HasPrefix(method, p) {
			return true
		}
	}
	return false
}

// A2AResult reports whether a result (or an HTTP+JSON binding body) has the
// shape of an A2A object: a 0.3 object with kind task, status-update,
// artifact-update or message, or a 1.0 StreamResponse / SendMessageResponse
// wrapping one as task, statusUpdate, artifactUpdate, message or msg.
func A2AResult(raw json.RawMessage) bool {
	if len(raw) == 0 || raw[0] != '{' || !mayNameA2AKey(raw) {
		return false
	}
	return a2aShape(raw)
}

// a2aShape is A2AResult's decoding of an object raw.
func a2aShape(raw json.RawMessage) bool {
	var probe map[string]json.RawMessage
	if json.Unmarshal(raw, &probe) != nil {
		return false
	}
	if k, ok := probe["kind"]; ok {
		var kind string
		_ = json.Unmarshal(k, &kind)
		switch kind {
		case "task", "status-update", "artifact-update", "message":
			return true
		}
	}
	for _, w := range []string{"task", "statusUpdate", "artifactUpdate", "msg"} {
		if v, ok := probe[w]; ok && len(v) > 0 && v[0] == '{' {
			return true
		}
	}
	if v, ok := probe["message"]; ok && len(v) > 0 && v[0] == '{' && len(probe) == 1 {
		return true
	}
	return false
}

// a2aKeys are the member names A2AResult looks at, quoted as in the text.
var a2aKeys = [...][]byte{[]byte(`"kind"`), []byte(`"task"`), []byte(`"statusUpdate"`), []byte(`"artifactUpdate"`), []byte(`"msg"`), []byte(`"message"`)}

// mayNameA2AKey reports whether raw may hold a member A2AResult looks at.
// False is certain: the probe's map keys are matched exactly, and a key can
// spell one of them only literally, quoted, or through an escape (invalid
// UTF-8 decodes to U+FFFD, never to ASCII). It spares the map decode on
// every event of a stream that is not A2A (an inference stream through the
// A2A parser).
func mayNameA2AKey(raw []byte) bool {
	if bytes.IndexByte(raw, '\\') >= 0 {
		return true
	}
	for _, k := range a2aKeys {
		if bytes.Contains(raw, k) {
			return true
		}
	}
	return false
}
