-- One event naming no job (a node, a type limit, a schedule, the lease).
INSERT INTO events (created_at, who, verb, job_id, node, type, schedule, detail, reason)
VALUES ({{now}}, :who, :verb, NULL, :node, :type, :schedule, :detail, :reason)
