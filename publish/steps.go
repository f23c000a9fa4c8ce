package publish

// Step names a step of the publish protocol. Every publish goes through
// the same steps, in the order of Steps, whatever the Storage: a run of
// the whole config takes them all in one process; a shard of a logical
// run takes the first two (its attempt), and the logical run's commit
// the last three.
type Step string

// The steps, in order.
const (
	// StepIntent: the state records the publish — the versions it takes
	// and its run folder — and nothing is written yet.
	StepIntent Step = "intent"
	// StepStaged: every part is written and finished where readers do not
	// see it (or, on a Storage without Caps.HidesParts, without the
	// _SUCCESS that tells readers it is there), and the state records the
	// parts. Until the publish is decided, a crash rolls it back.
	StepStaged Step = "staged"
	// StepDecided: the publish is decided — in the state for a run of the
	// whole config, in the logical run's _decision.json for shards — so a
	// crash from here is rolled forward.
	StepDecided Step = "decided"
	// StepVisible: the parts are completed: readers see them.
	StepVisible Step = "visible"
	// StepCompleted: the run folder's _verdict.json, _manifest.json and
	// _SUCCESS are written; the state commits next.
	StepCompleted Step = "completed"
)

// Steps lists the steps of a publish in order.
var Steps = []Step{StepIntent, StepStaged, StepDecided, StepVisible, StepCompleted}

// AttemptSteps are the steps a shard's attempt takes; CommitSteps those
// of its logical run's commit.
var (
	AttemptSteps = Steps[:2]
	CommitSteps  = Steps[2:]
)
