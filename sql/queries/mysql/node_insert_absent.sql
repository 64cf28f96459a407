-- MySQL spells ON CONFLICT DO NOTHING as INSERT IGNORE. IGNORE also turns
-- some errors into warnings; the store checks the values beforehand.
INSERT IGNORE INTO nodes (name, url, max_load, max_jobs, weight, warmup_seconds, accept_exceeding, candidate,
                          services, state, started_at, last_seen, load_avg, max_load_avg, mem_available,
                          reserved_memory, cores, lease_ms, host_id, hostname, pid, proc_start)
VALUES (:name, :url, :max_load, :max_jobs, :weight, :warmup_seconds, :accept_exceeding, :candidate,
        :services, 'ONLINE', {{now}}, {{now}}, :load_avg, :max_load_avg, :mem_available,
        :reserved_memory, :cores, :lease_ms, :host_id, :hostname, :pid, :proc_start)
