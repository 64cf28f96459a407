-- A job with a key waits while an earlier job of the same key is unfinished,
-- so jobs of one key run one at a time in submission order.
SELECT {{template "job_columns"}}
FROM jobs
WHERE status = :status
  AND (run_after IS NULL OR run_after <= {{now}})
  AND id > :after_id
  AND NOT (job_key <> '' AND EXISTS (
      SELECT 1
      FROM jobs earlier
      WHERE earlier.job_key = jobs.job_key
        AND earlier.id < jobs.id
        AND earlier.status NOT IN ('FINISHED', 'WARNING', 'FAILED', 'CANCELLED', 'DELETED')))
ORDER BY id
LIMIT :limit
