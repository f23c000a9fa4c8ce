package memstorage

import (
	"context"
	"errors"
	"fmt"
)

// ErrInjected is wrapped by every error a Fault makes.
var ErrInjected = errors.New("injected fault")

// Op names a call of a Storage or of its part writers.
type Op string

// The calls a Fault can strike.
const (
	OpStagePart      Op = "StagePart"
	OpWrite          Op = "Write"
	OpFinish         Op = "Finish"
	OpAbort          Op = "Abort"
	OpCompletePart   Op = "CompletePart"
	OpCompleteFolder Op = "CompleteFolder"
	OpCheckPart      Op = "CheckPart"
	OpListStaged     Op = "ListStaged"
	OpAbortStaged    Op = "AbortStaged"
	OpPutIfAbsent    Op = "PutIfAbsent"
	OpPut            Op = "Put"
	OpRead           Op = "Read"
	OpStat           Op = "Stat"
	OpList           Op = "List"
	OpDeletePrefix   Op = "DeletePrefix"
)

// Mode is what a Fault does to the call it strikes.
type Mode int

const (
	// Fail fails the call before it does anything.
	Fail Mode = iota
	// Hang blocks the call until its context is done (a part writer's:
	// the context StagePart was given), then fails it with the context's
	// error, having done nothing: a store that never answers.
	Hang
	// HalfSucceed does the call, then fails it: the answer was lost. A
	// CompletePart makes the part the object and fails; a PutIfAbsent
	// writes and reports created false and an error; a StagePart stages a
	// part and returns no writer for it; a Finish finishes the part and
	// returns no Part.
	HalfSucceed
)

// Fault describes the calls to strike and how.
type Fault struct {
	// Op is the call to strike.
	Op Op
	// Key, when set, limits the fault to calls whose key (or prefix, or
	// folder) is exactly it.
	Key string
	// Skip lets this many matching calls through first.
	Skip int
	// Count is how many matching calls to strike after Skip; 0 strikes
	// every one.
	Count int
	// Mode is what the fault does.
	Mode Mode
	// Err is wrapped by the error of a struck call, besides ErrInjected
	// (say publish.ErrNoAnswer).
	Err error
}

// Injected is a fault in force.
type Injected struct {
	s       *Storage
	f       Fault
	matched int // matching calls seen
	fired   int // calls struck
	removed bool
}

// Call is one call a Storage saw: its operation and key (or prefix, or
// folder).
type Call struct {
	Op  Op
	Key string
}

// Inject puts f in force until Remove. Faults are matched in the order
// they were injected; the first that strikes a call decides.
func (s *Storage) Inject(f Fault) *Injected {
	in := &Injected{s: s, f: f}
	s.mu.Lock()
	s.faults = append(s.faults, in)
	s.mu.Unlock()
	return in
}

// Fired reports how many calls the fault struck.
func (in *Injected) Fired() int {
	in.s.mu.Lock()
	defer in.s.mu.Unlock()
	return in.fired
}

// Remove ends the fault.
func (in *Injected) Remove() {
	in.s.mu.Lock()
	in.removed = true
	in.s.mu.Unlock()
}

// Calls returns the calls the storage saw so far, in order (those its
// key check refused aside).
func (s *Storage) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// enter records a call and applies the faults in force: it returns err
// when the call must fail before doing anything, and half when it must
// do its work and then fail with half. A call whose context is done fails
// (unless cleanup: an undo that runs after its context ended).
func (s *Storage) enter(ctx context.Context, op Op, key string, cleanup bool) (half, err error) {
	if err := ctx.Err(); err != nil && !cleanup {
		return nil, fmt.Errorf("memstorage: %s %q: %w", op, key, err)
	}
	s.mu.Lock()
	s.calls = append(s.calls, Call{Op: op, Key: key})
	var hit *Injected
	for _, in := range s.faults {
		if in.removed || in.f.Op != op || in.f.Key != "" && in.f.Key != key {
			continue
		}
		in.matched++
		if in.matched <= in.f.Skip || in.f.Count > 0 && in.fired >= in.f.Count {
			continue
		}
		in.fired++
		hit = in
		break
	}
	s.mu.Unlock()
	if hit == nil {
		return nil, nil
	}
	fail := fmt.Errorf("memstorage: %s %q: %w", op, key, ErrInjected)
	if hit.f.Err != nil {
		fail = fmt.Errorf("memstorage: %s %q: %w: %w", op, key, ErrInjected, hit.f.Err)
	}
	switch hit.f.Mode {
	case Hang:
		<-ctx.Done()
		return nil, fmt.Errorf("memstorage: %s %q hung: %w", op, key, ctx.Err())
	case HalfSucceed:
		return fail, nil
	default:
		return nil, fail
	}
}
