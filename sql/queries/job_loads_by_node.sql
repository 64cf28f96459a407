-- The load-holding jobs of each node. A PAUSED job holds load only while it
-- has a node, i.e. it was paused while running.
SELECT node, SUM(job_load) AS total_load, COUNT(*) AS running
FROM jobs
WHERE status IN {{statuses "load_holding"}}
  AND (status <> 'PAUSED' OR node <> '')
GROUP BY node
