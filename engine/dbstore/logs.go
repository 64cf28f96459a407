package dbstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jobctl/jobctl/engine"
)

// JobLogAppend stores one chunk of a job's output. Chunks are numbered in
// the order they are stored; a follower reading "after seq N" relies on
// that, so the chunks of one job are appended one after another, not
// concurrently. An unknown job is a *NotFoundError.
func (s *Store) JobLogAppend(ctx context.Context, p engine.JobLogAppendParams) error {
	stream, err := engine.ValidateLogStream(p.Stream)
	if err != nil {
		return err
	}
	data := p.Data
	if data == nil {
		data = []byte{} // the column is NOT NULL; an empty chunk is still a chunk
	}
	a := args{"job_id": p.JobID, "attempt": p.Attempt, "stream": string(stream), "data": data}
	if _, err := s.exec(ctx, s.q, qJobLogAppend, a); err != nil {
		// The foreign key refused it, most likely: say which job is missing
		// rather than quoting the constraint.
		if missing := s.jobMustExist(ctx, s.q, p.JobID); errors.Is(missing, engine.ErrNotFound) {
			return missing
		}
		return fmt.Errorf("append log of job %d: %w", p.JobID, err)
	}
	return nil
}

// JobLogList returns the job's chunks after p.AfterSeq, oldest first, at most
// p.Limit of them (0: all).
func (s *Store) JobLogList(ctx context.Context, p engine.JobLogListParams) ([]engine.LogChunk, error) {
	var rows []logRow
	a := args{"job_id": p.JobID, "after_seq": p.AfterSeq, "limit": limitOrAll(p.Limit)}
	if err := s.selectRows(ctx, s.q, &rows, qJobLogList, a, false); err != nil {
		return nil, fmt.Errorf("read log of job %d: %w", p.JobID, err)
	}
	chunks := make([]engine.LogChunk, len(rows))
	for i, r := range rows {
		data := r.Data
		if data == nil {
			data = []byte{}
		}
		chunks[i] = engine.LogChunk{Seq: r.Seq, JobID: r.JobID, Attempt: r.Attempt, Stream: engine.LogStream(r.Stream),
			Data: data, CreatedAt: r.CreatedAt.Time}
	}
	return chunks, nil
}
