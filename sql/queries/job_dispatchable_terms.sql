{{- /*
A fragment of job_list_dispatchable and job_list_first_children: the job
"jobs" of a queue may start now and its load is in the range asked for.

Its run_after has passed. Its key does not hold it back: this is the SQL
copy of engine.DispatchHold, for speed, and the conformance suite proves
the two agree. A key orders its jobs by place, (COALESCE(key_position, id),
id), submission order with a rollback job right after the job it undoes. A
job with a key waits while another job of the same key is earlier and
unfinished, so jobs of one key run one at a time in that order. It also
waits while another job of its key is active (engine.KeyActiveStatuses;
PAUSED only on a node), whatever its place, so a requeued old job cannot
run beside a later job of its key. Either way the other job has not ended,
and job_live_key_match finds such jobs of the key through the index of live
jobs, past however many ended jobs the key has. Last, it waits while an
earlier job of its key failed finally and awaits its rollback job, so the
rollback runs before the key moves on; job_rollback_pending_match finds
those through their own small index.
*/ -}}
job_load <= :max_load AND job_load > :load_above
      AND (run_after IS NULL OR run_after <= {{now}})
      AND NOT (job_key <> '' AND (EXISTS (
          SELECT 1
          FROM jobs other
          WHERE {{template "job_live_key_match"}}
            AND other.id <> jobs.id
            AND (COALESCE(other.key_position, other.id) < COALESCE(jobs.key_position, jobs.id)
                 OR (COALESCE(other.key_position, other.id) = COALESCE(jobs.key_position, jobs.id) AND other.id < jobs.id)
                 OR (other.status IN {{statuses "key_active"}} AND (other.status <> 'PAUSED' OR other.node <> ''))))
        OR EXISTS (
          SELECT 1
          FROM jobs other
          WHERE {{template "job_rollback_pending_match"}}
            AND (COALESCE(other.key_position, other.id) < COALESCE(jobs.key_position, jobs.id)
                 OR (COALESCE(other.key_position, other.id) = COALESCE(jobs.key_position, jobs.id) AND other.id < jobs.id)))))
