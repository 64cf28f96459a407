package placement

import (
	"sync"
	"testing"
)

func TestBooks(t *testing.T) {
	t.Parallel()
	b := NewBooks(BookLimits{MaxLoad: 4, MaxJobs: 3, AcceptExceeding: true})
	if d := b.Take(1, 1, nil); d.Accept || d.Reason != ReasonNotReady {
		t.Fatalf("books not ready yet took a job: %+v", d)
	}
	b.SetReady(true)
	entered := 0
	for id := int64(1); id <= 2; id++ {
		if d := b.Take(id, 1.5, func() { entered++ }); !d.Accept {
			t.Fatalf("job %d declined: %+v", id, d)
		}
	}
	if d := b.Take(2, 0.1, nil); d.Accept {
		t.Error("the same job was taken twice")
	}
	if d := b.Take(3, 1.5, nil); d.Accept || d.Reason != ReasonBusy {
		t.Errorf("3 + 1.5 over max 4 accepted: %+v", d)
	}
	if d := b.Take(3, 1, func() { entered++ }); !d.Accept {
		t.Errorf("a job that fits declined: %+v", d)
	}
	if d := b.Take(4, 0, nil); d.Accept || d.Reason != ReasonBusy {
		t.Errorf("a fourth job over max jobs 3 accepted: %+v", d)
	}
	if entered != 3 {
		t.Errorf("entered ran %d times, want 3", entered)
	}
	if load, jobs := b.Totals(); load != 4 || jobs != 3 || !b.Holds(2) {
		t.Errorf("totals %v, %d", load, jobs)
	}
	b.SetMaintenance(true)
	if d := b.Take(5, 0, nil); d.Accept || d.Reason != ReasonNotReady+": in maintenance" {
		t.Errorf("in maintenance: %+v", d)
	}
	b.SetMaintenance(false)
	for _, id := range []int64{1, 2, 3} {
		if !b.Release(id) {
			t.Errorf("release %d: not held", id)
		}
	}
	if b.Release(1) {
		t.Error("a job was released twice")
	}
	if load, jobs := b.Totals(); load != 0 || jobs != 0 {
		t.Errorf("idle books show load %v, %d jobs", load, jobs)
	}
	if d := b.Take(9, 10, nil); !d.Accept || d.Warning == "" {
		t.Errorf("an oversized job on idle books that accept exceeding: %+v", d)
	}
}

// Concurrent offers never overcommit the books.
func TestBooksConcurrentTakes(t *testing.T) {
	t.Parallel()
	b := NewBooks(BookLimits{MaxLoad: 10, MaxJobs: 100})
	b.SetReady(true)
	var wg sync.WaitGroup
	var mu sync.Mutex
	taken := 0
	for id := range int64(200) {
		wg.Go(func() {
			if b.Take(id, 1, nil).Accept {
				mu.Lock()
				taken++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if load, jobs := b.Totals(); taken != 10 || jobs != 10 || load != 10 {
		t.Errorf("took %d jobs (books: %d, load %v), want exactly 10", taken, jobs, load)
	}
}

func TestBooksWaitingJobsHoldNoLoad(t *testing.T) {
	t.Parallel()
	b := NewBooks(BookLimits{MaxLoad: 1, MaxJobs: 1})
	b.SetReady(true)
	if d := b.Take(1, 1, nil); !d.Accept {
		t.Fatalf("parent declined: %+v", d)
	}
	if d := b.Take(2, 1, nil); d.Accept {
		t.Fatal("a child taken beside its running parent on full books")
	}
	for range 2 { // a second time changes nothing
		if !b.SetWaiting(1, true) {
			t.Fatal("the parent is not held")
		}
	}
	if load, jobs := b.Totals(); load != 0 || jobs != 0 || b.Waiting() != 1 || !b.Holds(1) {
		t.Errorf("books with the parent waiting: load %v, %d jobs, %d waiting", load, jobs, b.Waiting())
	}
	if d := b.Take(1, 1, nil); d.Accept {
		t.Error("a waiting job was taken again")
	}
	if d := b.Take(2, 1, nil); !d.Accept {
		t.Fatalf("a child declined while its parent waits: %+v", d)
	}
	// Back from waiting, over the limits for a while: nothing more fits.
	b.SetWaiting(1, false)
	if load, jobs := b.Totals(); load != 2 || jobs != 2 || b.Waiting() != 0 {
		t.Errorf("books with the parent back: load %v, %d jobs", load, jobs)
	}
	if d := b.Take(3, 0.1, nil); d.Accept {
		t.Error("a job taken on books over their limits")
	}
	b.Release(2)
	b.SetWaiting(1, true)
	if !b.Release(1) || b.Waiting() != 0 {
		t.Error("a waiting job was not released")
	}
	if load, jobs := b.Totals(); load != 0 || jobs != 0 {
		t.Errorf("idle books show load %v, %d jobs", load, jobs)
	}
	if b.SetWaiting(1, true) {
		t.Error("a job the books do not hold was set waiting")
	}
}
