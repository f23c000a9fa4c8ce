package lineage

import "context"

// Transport delivers encoded events somewhere: an HTTP endpoint or a file.
type Transport interface {
	// Send delivers one event, its JSON without a trailing newline. Its
	// errors need not name the destination: DeliveryError does.
	Send(ctx context.Context, event []byte) error
	// String names where events go, for messages: a URL or a file path.
	String() string
}
