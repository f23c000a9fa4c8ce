package config

import (
	"fmt"
	"io"
)

// redacted is what a Secret prints as.
const redacted = "[redacted]"

// Secret is a value of the [request] table: a header or cookie value,
// often a token read from the environment. It prints as "[redacted]"
// with every fmt verb (%v, %+v, %#v, %s, %q, %x), in slog and in JSON, so
// a Config can be logged, dumped or encoded without leaking it. The value
// sits behind a pointer: fmt prints a Secret it reaches through an
// unexported field, where its methods are not called, as an address.
// Value returns the value itself, for the request.
type Secret struct {
	value *string
}

func newSecret(v string) Secret { return Secret{value: &v} }

// Value returns the secret's value: the text to send, never to print.
func (s Secret) Value() string {
	if s.value == nil {
		return ""
	}
	return *s.value
}

// String returns "[redacted]".
func (s Secret) String() string { return redacted }

// Format prints "[redacted]" whatever the verb and flags.
func (s Secret) Format(f fmt.State, _ rune) { io.WriteString(f, redacted) }

// MarshalText encodes "[redacted]": encoding/json and slog's handlers use
// it.
func (s Secret) MarshalText() ([]byte, error) { return []byte(redacted), nil }
