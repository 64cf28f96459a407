-- A new node. When the name exists already this changes nothing; the row
-- is then only replaced through node_takeover.
INSERT INTO nodes (name, url, max_load, max_jobs, weight, warmup_seconds, accept_exceeding, candidate,
                   services, state, started_at, last_seen, load_avg, max_load_avg, mem_available,
                   reserved_memory, cores, lease_ms, host_id, hostname, pid, proc_start)
VALUES (:name, :url, :max_load, :max_jobs, :weight, :warmup_seconds, :accept_exceeding, :candidate,
        :services, 'ONLINE', {{now}}, {{now}}, :load_avg, :max_load_avg, :mem_available,
        :reserved_memory, :cores, :lease_ms, :host_id, :hostname, :pid, :proc_start)
ON CONFLICT (name) DO NOTHING
