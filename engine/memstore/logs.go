package memstore

import (
	"context"
	"slices"
	"sort"

	"github.com/jobctl/jobctl/engine"
)

// JobLogAppend stores one chunk of a job's output under the next sequence
// number of the store; a *NotFoundError for an unknown job.
func (s *Store) JobLogAppend(_ context.Context, p engine.JobLogAppendParams) error {
	stream, err := engine.ValidateLogStream(p.Stream)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.jobs.byID[p.JobID] == nil {
		return jobNotFound(p.JobID)
	}
	s.nextSeq++
	data := slices.Clone(p.Data)
	if data == nil {
		data = []byte{}
	}
	s.logs[p.JobID] = append(s.logs[p.JobID], engine.LogChunk{
		Seq: s.nextSeq, JobID: p.JobID, Attempt: p.Attempt, Stream: stream, Data: data, CreatedAt: s.now(),
	})
	return nil
}

// JobLogList returns the job's chunks after p.AfterSeq, oldest first, at
// most p.Limit of them (0: all).
func (s *Store) JobLogList(_ context.Context, p engine.JobLogListParams) ([]engine.LogChunk, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	chunks := s.logs[p.JobID]
	from := sort.Search(len(chunks), func(i int) bool { return chunks[i].Seq > p.AfterSeq })
	chunks = chunks[from:]
	if p.Limit > 0 && len(chunks) > p.Limit {
		chunks = chunks[:p.Limit]
	}
	out := make([]engine.LogChunk, len(chunks))
	for i, c := range chunks {
		c.Data = slices.Clone(c.Data)
		if c.Data == nil {
			c.Data = []byte{}
		}
		out[i] = c
	}
	return out, nil
}
