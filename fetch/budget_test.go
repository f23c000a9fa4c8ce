package fetch

import (
	"context"
	"testing"
	"time"
)

const mib = 1 << 20

// TestBodyBudget: big bodies hold their size of the budget until they are
// released; another big body waits for it, small ones do not; a body too
// large gives its share back at once.
func TestBodyBudget(t *testing.T) {
	base := bodyServer(t)
	c := newTestClient(t, Config{BodyBudget: 5 * mib, MaxBodyBytes: 4 * mib})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	a, err := c.Fetch(ctx, bodyURL(base, 3*mib, true), nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.budget.TryAcquire(2*mib + 1) {
		t.Fatal("a 3 MiB body left more than 2 MiB of a 5 MiB budget")
	}
	small, err := c.Fetch(ctx, bodyURL(base, mib/2, false), nil)
	if err != nil || len(small.Body) != mib/2 {
		t.Fatalf("a small body beside a big one: %v", err)
	}
	small.Release()

	// Of unknown length, a big body waits for MaxBodyBytes of the budget:
	// more than a holds leaves.
	var b *Response
	done := make(chan error, 1)
	go func() {
		var err error
		b, err = c.Fetch(ctx, bodyURL(base, 2*mib, false), nil)
		done <- err
	}()
	waiting(t, c, done)
	a.Release()
	if err := <-done; err != nil || len(b.Body) != 2*mib {
		t.Fatalf("the waiting body: %v", err)
	}
	b.Release()

	// Too large: nothing is held after.
	if _, err := c.Fetch(ctx, bodyURL(base, 5*mib, false), nil); KindOf(err) != KindTooLarge {
		t.Fatalf("a 5 MiB body: %v, want too large", err)
	}
	if !c.budget.TryAcquire(5 * mib) {
		t.Fatal("the budget was not all given back")
	}
	c.budget.Release(5 * mib)
}

// TestBodyBudgetWaitIsNotTimed: a body that waits for the budget longer
// than the request's timeout is still read: the wait says nothing about
// the site.
func TestBodyBudgetWaitIsNotTimed(t *testing.T) {
	base := bodyServer(t)
	c := newTestClient(t, Config{BodyBudget: 3 * mib, Timeout: time.Second})
	if err := c.budget.Acquire(context.Background(), 2*mib); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		resp, err := c.Fetch(context.Background(), bodyURL(base, 2*mib, true), nil)
		if err == nil {
			resp.Release()
		}
		done <- err
	}()
	waiting(t, c, done)
	time.Sleep(2500 * time.Millisecond) // the body waits past its timeout
	c.budget.Release(2 * mib)
	if err := <-done; err != nil {
		t.Fatalf("the body that waited: %v", err)
	}
}

// waiting returns once a fetch waits for c's budget, which has room for
// one byte more (a waiter keeps TryAcquire from taking it), or fails the
// test when the fetch ends first.
func waiting(t *testing.T, c *Client, done <-chan error) {
	t.Helper()
	for c.budget.TryAcquire(1) {
		c.budget.Release(1)
		select {
		case err := <-done:
			t.Fatalf("the fetch ended without waiting for the budget: %v", err)
		case <-time.After(time.Millisecond):
		}
	}
}

// TestBodyBudgetWaitIsCanceled: a body waiting for the budget stops when
// the caller cancels, holding nothing.
func TestBodyBudgetWaitIsCanceled(t *testing.T) {
	base := bodyServer(t)
	c := newTestClient(t, Config{BodyBudget: 3 * mib})
	if err := c.budget.Acquire(context.Background(), 2*mib); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := c.Fetch(ctx, bodyURL(base, 2*mib, true), nil)
		done <- err
	}()
	waiting(t, c, done)
	cancel()
	if err := <-done; KindOf(err) != KindCanceled {
		t.Fatalf("err %v, want canceled", err)
	}
	c.budget.Release(2 * mib)
	if !c.budget.TryAcquire(3 * mib) {
		t.Fatal("the canceled body holds part of the budget")
	}
	c.budget.Release(3 * mib)
}
