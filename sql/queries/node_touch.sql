-- A touch that names its process (by_process) applies only while the row
-- still names that process, so one whose name was taken over cannot keep
-- the row alive. It returns what the node learns from it.
UPDATE nodes
SET last_seen = {{now}}, load_avg = :load_avg, mem_available = :mem_available, cores = :cores
WHERE name = :name
  AND (NOT :by_process OR (host_id = :host_id AND pid = :pid AND proc_start = :proc_start))
RETURNING state, maintenance
