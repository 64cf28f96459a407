-- A node with its live load and whether it holds the lease now.
SELECT n.name, n.url, n.max_load, n.max_jobs, n.weight, n.warmup_seconds, n.accept_exceeding,
       n.candidate, n.services, n.state, n.maintenance, n.started_at, n.last_seen, n.load_avg,
       n.max_load_avg, n.mem_available, n.reserved_memory, n.cores, n.lease_ms, n.host_id, n.hostname, n.pid,
       n.proc_start, n.beat_missed_at, n.running_usage,
       COALESCE(l.total_load, 0) AS total_load,
       COALESCE(l.running, 0) AS running,
       CASE WHEN le.owner = n.name AND le.expires_at > {{now}} THEN 1 ELSE 0 END AS dispatcher
FROM nodes n
LEFT JOIN ({{template "job_loads_by_node"}}) l ON l.node = n.name
LEFT JOIN lease le ON le.id = 1
