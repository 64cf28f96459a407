package storetest

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/jobctl/jobctl/engine"
)

var logTests = []subtest{
	{"LogAppendList", testLogAppendList},
	{"LogUnknownJob", testLogUnknownJob},
	{"LogStreams", testLogStreams},
}

func appendLog(t *testing.T, s engine.Store, jobID int64, attempt int, data []byte) {
	t.Helper()
	if err := s.JobLogAppend(t.Context(), engine.JobLogAppendParams{JobID: jobID, Attempt: attempt, Data: data}); err != nil {
		t.Fatalf("JobLogAppend(job %d): %v", jobID, err)
	}
}

func listLog(t *testing.T, s engine.Store, jobID, afterSeq int64, limit int) []engine.LogChunk {
	t.Helper()
	chunks, err := s.JobLogList(t.Context(), engine.JobLogListParams{JobID: jobID, AfterSeq: afterSeq, Limit: limit})
	if err != nil {
		t.Fatalf("JobLogList(job %d after %d): %v", jobID, afterSeq, err)
	}
	return chunks
}

func testLogAppendList(t *testing.T, s engine.Store) {
	j := queued(t, s, 1)
	other := queued(t, s, 1)
	big := make([]byte, 256<<10)
	for i := range big {
		big[i] = byte(i * 7)
	}
	want := [][]byte{
		[]byte("hello\n"),
		{0, 1, 2, 0xff, 0xfe, '\n', 0, 0x80}, // NULs and invalid UTF-8
		big,
		[]byte("attempt two\r\n"),
	}
	attempts := []int{1, 1, 1, 2}
	before := dbNow(t, s)
	for i, data := range want {
		appendLog(t, s, j.ID, attempts[i], data)
		if i == 1 {
			appendLog(t, s, other.ID, 1, []byte("another job's output"))
		}
	}
	after := dbNow(t, s)

	all := listLog(t, s, j.ID, 0, 0)
	if len(all) != len(want) {
		t.Fatalf("JobLogList: %d chunks, want %d", len(all), len(want))
	}
	for i, c := range all {
		if !bytes.Equal(c.Data, want[i]) {
			t.Errorf("chunk %d: data differs (%d bytes, want %d)", i, len(c.Data), len(want[i]))
		}
		if c.JobID != j.ID || c.Attempt != attempts[i] {
			t.Errorf("chunk %d: job %d attempt %d, want job %d attempt %d", i, c.JobID, c.Attempt, j.ID, attempts[i])
		}
		if i > 0 && c.Seq <= all[i-1].Seq {
			t.Errorf("chunk %d: seq %d does not follow %d", i, c.Seq, all[i-1].Seq)
		}
		wantUTC(t, "CreatedAt", c.CreatedAt)
		if !within(c.CreatedAt, before, after) {
			t.Errorf("chunk %d: CreatedAt %s not within [%s, %s]", i, c.CreatedAt, before, after)
		}
	}

	rest := listLog(t, s, j.ID, all[0].Seq, 0)
	if len(rest) != 3 || rest[0].Seq != all[1].Seq {
		t.Errorf("after seq %d: got %d chunks starting at %v, want 3 from %d", all[0].Seq, len(rest), firstSeq(rest), all[1].Seq)
	}
	page := listLog(t, s, j.ID, all[0].Seq, 2)
	if len(page) != 2 || page[1].Seq != all[2].Seq {
		t.Errorf("after seq %d, limit 2: got %d chunks, want seqs %d, %d", all[0].Seq, len(page), all[1].Seq, all[2].Seq)
	}
	if tail := listLog(t, s, j.ID, all[3].Seq, 0); len(tail) != 0 {
		t.Errorf("after the last seq: %d chunks, want none", len(tail))
	}
	if o := listLog(t, s, other.ID, 0, 0); len(o) != 1 || string(o[0].Data) != "another job's output" {
		t.Errorf("other job's log: %+v", o)
	}

	// An empty chunk is stored and read back as empty.
	appendLog(t, s, other.ID, 1, nil)
	if o := listLog(t, s, other.ID, 0, 0); len(o) != 2 || len(o[1].Data) != 0 {
		t.Errorf("empty chunk: got %d chunks", len(o))
	}
}

func firstSeq(chunks []engine.LogChunk) any {
	if len(chunks) == 0 {
		return "none"
	}
	return chunks[0].Seq
}

func testLogUnknownJob(t *testing.T, s engine.Store) {
	err := s.JobLogAppend(t.Context(), engine.JobLogAppendParams{JobID: 424242, Attempt: 1, Data: []byte("x")})
	wantErrIs(t, "JobLogAppend to an unknown job", err, engine.ErrNotFound)
	if chunks := listLog(t, s, 424242, 0, 0); len(chunks) != 0 {
		t.Errorf("log of an unknown job: %d chunks", len(chunks))
	}
}

// Each chunk keeps its stream, in the order the chunks were stored; no
// stream is the job's output; a stream of no known name is refused with
// an *InvalidError and stores nothing.
func testLogStreams(t *testing.T, s engine.Store) {
	j := queued(t, s, 1)
	want := []engine.LogChunk{
		{Stream: engine.LogOutput, Data: []byte("half a li")},
		{Stream: engine.LogProtocol, Data: []byte("jobctl:progress 50 half way\n")},
		{Stream: engine.LogOutput, Data: []byte("ne\n")},
		{Stream: engine.LogNote, Data: []byte("timed out after 1s, sending SIGTERM\n")},
	}
	for _, c := range want {
		if err := s.JobLogAppend(t.Context(), engine.JobLogAppendParams{JobID: j.ID, Attempt: 1, Stream: c.Stream, Data: c.Data}); err != nil {
			t.Fatalf("JobLogAppend(%s): %v", c.Stream, err)
		}
	}
	appendLog(t, s, j.ID, 2, []byte("no stream named\n"))
	want = append(want, engine.LogChunk{Stream: engine.LogOutput, Data: []byte("no stream named\n")})
	for _, bad := range []engine.LogStream{"stderr", "OUTPUT", "note "} {
		err := s.JobLogAppend(t.Context(), engine.JobLogAppendParams{JobID: j.ID, Attempt: 2, Stream: bad, Data: []byte("x")})
		wantErrIs(t, fmt.Sprintf("JobLogAppend to stream %q", bad), err, engine.ErrInvalid)
	}
	got := listLog(t, s, j.ID, 0, 0)
	if len(got) != len(want) {
		t.Fatalf("%d chunks, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].Stream != want[i].Stream || !bytes.Equal(got[i].Data, want[i].Data) {
			t.Errorf("chunk %d: %s %q, want %s %q", i, got[i].Stream, got[i].Data, want[i].Stream, want[i].Data)
		}
	}
}
