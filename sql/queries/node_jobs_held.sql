-- Jobs a node still holds. The dispatcher recovers them from the node's
-- row once the node is gone, so the row stays until it has.
SELECT COUNT(*)
FROM jobs
WHERE node = :name
  AND status IN {{statuses "recoverable"}}
