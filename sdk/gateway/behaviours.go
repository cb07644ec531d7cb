package gateway

// Names of the optional pipeline behaviours, as catalogs, the protocol's
// Describe and conformance reports spell them.
const (
	BehaviourFinish   = "finish"
	BehaviourInit     = "init"
	BehaviourReady    = "ready"
	BehaviourShutdown = "shutdown"
	BehaviourStream   = "stream"
)

// Behaviours returns the optional behaviours p implements, sorted by name:
// Finisher, Initializer, Readier, Shutdowner, StreamingResponder.
func Behaviours(p Plugin) []string {
	var b []string
	if _, ok := p.(Finisher); ok {
		b = append(b, BehaviourFinish)
	}
	if _, ok := p.(Initializer); ok {
		b = append(b, BehaviourInit)
	}
	if _, ok := p.(Readier); ok {
		b = append(b, BehaviourReady)
	}
	if _, ok := p.(Shutdowner); ok {
		b = append(b, BehaviourShutdown)
	}
	if _, ok := p.(StreamingResponder); ok {
		b = append(b, BehaviourStream)
	}
	return b
}
