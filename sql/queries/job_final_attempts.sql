{{- /*
The ended jobs whose rows hold their final attempt (migration 016): the
attempt that ended the job is on the row and nowhere else. A job that
ended without a run (cancelled in the queue: attempt 0) holds none, and
where job_attempts has a row of the job's attempt number (the attempt
ended with a retry before the job was cancelled or failed in the queue,
or its ending cleared the node), that row is the attempt, not the job's.
The ended-status term stands as the partial index jobs_type_measured
writes it, so that SQLite finds the measured ones there. A query goes on
with its own "AND …" terms.
*/ -}}
jobs AS j
WHERE {{statusOneOf "j.status" "terminal"}}
  AND j.finished_at IS NOT NULL AND j.attempt > 0
  AND NOT EXISTS (SELECT 1 FROM job_attempts AS k WHERE k.job_id = j.id AND k.attempt = j.attempt)
