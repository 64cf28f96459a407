-- Every limit with the number of jobs of its type that run now, those that
-- hold load on a node, as job_loads_by_node counts them. Only the limited
-- types are counted, through the status index, so the dispatcher can read
-- it every round.
SELECT l.type, l.max_running, l.updated_at, COALESCE(r.running, 0) AS running
FROM type_limits l
LEFT JOIN (
    SELECT j.type, COUNT(*) AS running
    FROM jobs j
    WHERE j.status IN {{statuses "load_holding"}}
      AND (j.status <> 'PAUSED' OR j.node <> '')
      AND j.type IN (SELECT type FROM type_limits)
    GROUP BY j.type
) r ON r.type = l.type
