// Package storagetest is the conformance suite of publish.Storage: every
// backend runs it from its tests, so the publish protocol can rely on what
// publish.Storage's doc comments promise whichever backend it is given. It
// is imported only by tests.
package storagetest

import (
	"testing"

	"github.com/databrew/databrew-stage/publish"
)

// Run checks the properties publish.Storage documents, one subtest each,
// on a new storage from open per subtest: an empty root of its own. open
// registers the storage's cleanup with t. Properties that depend on a
// capability are checked as the storage's Caps say.
func Run(t *testing.T, open func(t *testing.T) publish.Storage) {
	properties := []struct {
		name  string
		check func(*fixture)
	}{
		{"CapsAreConsistent", capsAreConsistent},
		{"BadKeysAreRefusedAndNothingEscapesTheRoot", badKeysAreRefused},
		{"UnusualKeysRoundTrip", unusualKeysRoundTrip},
		{"PutIfAbsentCreatesOnce", putIfAbsentCreatesOnce},
		{"PutIfAbsentCreatesOnceAmongConcurrentCallers", putIfAbsentConcurrently},
		{"PutReplaces", putReplaces},
		{"PutIsAtomicForReaders", putIsAtomicForReaders},
		{"ReadOfAnAbsentKeyIsNotExist", readOfAbsent},
		{"StatGivesTheSize", statGivesTheSize},
		{"ListIsInKeyOrderWithinThePrefix", listInKeyOrder},
		{"DeletePrefixCountsAndKeepsToThePrefix", deletePrefixCounts},
		{"StagePartRefusesATakenKey", stagePartRefusesATakenKey},
		{"StagedPartIsHiddenUntilCompleted", stagedPartVisibility},
		{"CompletePartIsIdempotent", completePartIsIdempotent},
		{"CompletePartIsCreateOnly", completePartIsCreateOnly},
		{"CompletePartOfAGonePartIsNotExist", completeGonePart},
		{"TwoStagingsOfAKeyTheFirstCompletedWins", twoStagingsOfAKey},
		{"CheckPartFollowsThePart", checkPartFollowsThePart},
		{"ListStagedListsOpenAndFinishedPartsInKeyOrder", listStaged},
		{"AbortStagedAbortsOnlyOwnPartsUnderThePrefix", abortStagedOnlyOwn},
		{"WriterAbortUndoesThePart", writerAbortUndoes},
		{"DeletePrefixLeavesStagedParts", deletePrefixLeavesStagedParts},
		{"CompleteFolderCompletesEveryPart", completeFolder},
		{"CompleteFolderAtOnceIsAllOrNothing", completeFolderAtOnce},
		{"CompleteFolderAtOnceReadersSeeAllOrNothing", completeFolderReaders},
		{"EmptyPartsAndObjects", emptyPartsAndObjects},
		{"BigPartRoundTripsByteForByte", bigPartRoundTrips},
		{"DoneContextIsHonoured", doneContextIsHonoured},
		{"ContextEndedWhileWritingFailsThePart", contextEndedWhileWriting},
		{"WhereNamesTheKey", whereNamesTheKey},
	}
	for _, p := range properties {
		t.Run(p.name, func(t *testing.T) {
			s := open(t)
			p.check(&fixture{t: t, s: s, caps: s.Caps()})
		})
	}
}
