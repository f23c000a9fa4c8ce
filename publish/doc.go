// Package publish publishes an export exactly once, by one protocol over one
// storage port.
//
// The protocol (Publisher, Attempt, Commit; its Steps are intent, staged,
// decided, visible, completed) is the same for every output: a run of the
// whole config is a logical run of one shard committed in the same
// process (Publisher.Publish), its decision recorded in the state; a shard
// of a logical run stages an attempt (OpenShard, Attempt.Stage) that the
// logical run's Commit decides in _decision.json. Publisher.Reconcile and
// Attempt.Settle resolve what a crash interrupted: an undecided publish is
// rolled back, a decided one forward; records written by earlier releases
// are read too (see state.Publication).
//
// The port is what the protocol needs of the place it publishes into:
// Storage, with Caps for what a backend can and cannot do. Every backend — a local folder
// (publish/folder), S3, Azure Blob Storage and Google Cloud Storage
// (objstore.Target.Storage), the in-memory fake (publish/memstorage) —
// passes the conformance suite publish/storagetest, so the protocol can
// rely on what Storage's doc comments promise whichever backend it is
// given.
//
// The protocol writes a run's part files where readers do not see them
// yet (StagePart), records them, makes them visible create-only
// (CompletePart, CompleteFolder) and writes the run's small files
// create-only (PutIfAbsent); after a crash it looks at what is staged
// (ListStaged, CheckPart) and rolls forward, by completing again
// (completion is idempotent), or back (AbortStaged, DeletePrefix). The
// backends differ in whether a part can stay hidden once written and
// whether several parts can appear at once: the protocol asks Caps instead
// of switching on the backend's type.
//
// A table (Table, an Iceberg table) is the other kind of output: a run of
// the whole config is one commit of the table carrying its run id
// (TablePublisher), and the shards of a logical run into a table follow
// the protocol above with the table in Output.Table and only the control
// files in its Storage: each attempt stages data files and describes them
// in its shard manifest, and the commit adds every decided attempt's in
// one commit of the table (see tableshards.go).
package publish
