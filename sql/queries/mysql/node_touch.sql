-- A touch that names its process (by_process) applies only while the row
-- still names that process, so one whose name was taken over cannot keep
-- the row alive. running_usage is what the node measured of the jobs it
-- runs, a JSON array of engine.LiveUsage. What the node learns from it is
-- read back by node_touched in the same transaction (no UPDATE … RETURNING
-- here).
UPDATE nodes
SET last_seen = {{now}}, load_avg = :load_avg, mem_available = :mem_available, cores = :cores,
    running_usage = :running_usage
WHERE name = :name
  AND (NOT :by_process OR (host_id = :host_id AND pid = :pid AND proc_start = :proc_start))
