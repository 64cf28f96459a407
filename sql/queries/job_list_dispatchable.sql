-- The SQL copy of engine.DispatchHold, for speed; the conformance suite
-- proves the two agree. A job with a key waits while another job of the
-- same key is earlier and unfinished, so jobs of one key run one at a time
-- in submission order. It also waits while another job of its key is
-- active (engine.KeyActiveStatuses; PAUSED only on a node), whatever its
-- id, so a requeued old job cannot run beside a later job of its key.
-- Either way the other job has not ended, and job_live_key_match finds such
-- jobs of the key through the index of live jobs, past however many ended
-- jobs the key has.
SELECT {{template "job_columns_brief"}}
FROM jobs
WHERE status = :status
  AND (run_after IS NULL OR run_after <= {{now}})
  AND id > :after_id
  AND NOT (job_key <> '' AND EXISTS (
      SELECT 1
      FROM jobs other
      WHERE {{template "job_live_key_match"}}
        AND other.id <> jobs.id
        AND (other.id < jobs.id
             OR (other.status IN {{statuses "key_active"}} AND (other.status <> 'PAUSED' OR other.node <> '')))))
ORDER BY id
LIMIT :limit
