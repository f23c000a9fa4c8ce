// Package storetest is the conformance suite of crawl.Store: every store
// runs it from its tests, so the engine can rely on what crawl.Store's doc
// comments promise whichever store it is given. It is imported only by
// tests.
package storetest

import (
	"testing"

	"github.com/databrew/databrew-stage/crawl"
)

// Run checks the properties crawl.Store documents, one subtest each, on a
// new store from newStore per subtest. newStore registers the store's
// cleanup with t.
func Run(t *testing.T, newStore func(t *testing.T) crawl.Store) {
	properties := []struct {
		name  string
		check func(*fixture)
	}{
		{"BeginOnAnEmptyStoreStartsTraversal1", beginStartsTraversal1},
		{"BeginWithAQueueResumes", beginResumes},
		{"BeginRequeuesFailedURLs", beginRequeuesFailed},
		{"BeginRequeuesFailedURLsInANewTraversal", beginRequeuesFailedInANewTraversal},
		{"ReadReturnsEntriesAfterSeqInOrderUpToLimit", readAfterInOrder},
		{"QueueKeepsEntriesIntact", queueKeepsEntries},
		{"SeenIsPerTraversal", seenPerTraversal},
		{"SeenFreshNamesURLsNeverHeld", seenFreshNamesURLsNeverHeld},
		{"CommitEnqueueSkipsSeenURLs", enqueueSkipsSeen},
		{"CommitDoneLeavesTheQueue", doneLeavesTheQueue},
		{"CommitRetryMovesFailedURLsBackToTheQueue", retryMovesFailed},
		{"CommitAppliesEnqueueThenDoneThenRetry", commitOrder},
		{"CommitRaisesTheNextSequenceNumber", commitRaisesNextSeq},
		{"ItemsCountNewChangedUnchanged", itemsCount},
		{"ItemKeysOfAnyLength", itemKeysOfAnyLength},
		{"DuplicateKeyIsHeldByThePageThatFirstStoredIt", duplicateHeldByFirst},
		{"HolderFirstValuesInATraversalWin", holderFirstValuesWin},
		{"FirstDuplicateComesFromTheFirstDone", firstDuplicate},
		{"KeyTakenOverAfterTheHolderMissedATraversal", takeover},
		{"KeyNotTakenOverWhileTheHolderYieldsIt", noTakeoverWhileHeld},
		{"KeyNotTakenOverWithoutYieldingItInThePreviousTraversal", noTakeoverWithoutYielding},
		{"KeyMovesWhenTheCompletedTraversalDidNotLinkItsHolder", keyMovesWhenItsHolderIsNotLinked},
		{"KeyStaysWithAHolderTheTraversalLinked", keyStaysWithALinkedHolder},
		{"KeyStaysWithAHolderThatYieldedItInTheTraversal", keyStaysWithAHolderThatYieldedIt},
		{"MovesWaitForTheTraversalToComplete", movesWaitForTheTraversalToComplete},
		{"RequeueFailedMovesTheFailedSet", requeueFailed},
		{"FinishAccumulatesGapsOverATraversal", finishGaps},
		{"FinishReportsQueuedAndFailed", finishCounts},
		{"ReadAndSeenWhileCommitting", readWhileCommitting},
		{"MemoIsReplacedForgottenOrKeptAsDoneSays", memoReplacedForgottenKept},
		{"TouchedItemsCountUnchangedWhenHeldForTheirURL", touchedItemsCountUnchanged},
		{"SkippedPagesAreSeenAndTheirItemsCountSkippedOnce", skippedPagesAreSeen},
		{"SkippedPagesKeepTheirKeysAgainstATakeover", skippedPagesKeepTheirKeys},
		{"SkipsStandForTheItemsTheirMemoListsOnly", skipsStandForTheirMemosItemsOnly},
	}
	for _, p := range properties {
		t.Run(p.name, func(t *testing.T) { p.check(&fixture{t: t, s: newStore(t)}) })
	}
}
