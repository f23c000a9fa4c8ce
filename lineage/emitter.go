package lineage

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
)

// Emitter sends each event to every transport. A transport that fails
// does not keep the event from the others; its failure is returned and
// counted, never turned into a failed run.
type Emitter struct {
	transports []Transport

	mu          sync.Mutex
	undelivered int
}

// NewEmitter returns an emitter to the transports.
func NewEmitter(transports ...Transport) *Emitter {
	return &Emitter{transports: transports}
}

// DeliveryError is an event that a transport did not take.
type DeliveryError struct {
	Transport Transport
	Event     EventType
	Err       error
}

// Error says which event did not reach where, and why.
func (d *DeliveryError) Error() string {
	return fmt.Sprintf("openlineage %s event not delivered to %s: %v", d.Event, d.Transport, d.Err)
}

// Unwrap returns the transport's error.
func (d *DeliveryError) Unwrap() error { return d.Err }

// Emit encodes the event once and sends it to every transport in turn. It
// returns one DeliveryError per transport that failed, none when all took
// the event.
func (e *Emitter) Emit(ctx context.Context, event RunEvent) []*DeliveryError {
	var failed []*DeliveryError
	body, err := json.Marshal(event)
	for _, t := range e.transports {
		if err == nil {
			if sendErr := t.Send(ctx, body); sendErr != nil {
				failed = append(failed, &DeliveryError{Transport: t, Event: event.EventType, Err: sendErr})
			}
			continue
		}
		failed = append(failed, &DeliveryError{Transport: t, Event: event.EventType, Err: fmt.Errorf("encode event: %w", err)})
	}
	e.mu.Lock()
	e.undelivered += len(failed)
	e.mu.Unlock()
	return failed
}

// Undelivered returns how many deliveries have failed so far: an event
// that two transports missed counts twice.
func (e *Emitter) Undelivered() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.undelivered
}
