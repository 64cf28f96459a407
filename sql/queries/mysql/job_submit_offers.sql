-- The services of the nodes that offer jobs of the type, one row a node
-- (job_submit), with whether the node shows ONLINE (not in maintenance), its
-- max load, and the service's load, timeout and memory limit. old_form
-- marks a service stored by a release that kept its timeout as text only.
-- Types compare as bytes, as everywhere else.
SELECT n.name,
       CASE WHEN n.state = 'ONLINE' AND NOT n.maintenance THEN 1 ELSE 0 END AS online,
       n.max_load, s.svc_load, s.svc_timeout_seconds, s.svc_memory,
       s.svc_timeout IS NOT NULL AND s.svc_timeout_seconds IS NULL AS old_form
FROM nodes n, JSON_TABLE(n.services, '$[*]' COLUMNS (
    svc_type VARCHAR(255) PATH '$.type', svc_load DOUBLE PATH '$.load',
    svc_timeout_seconds DOUBLE PATH '$.timeout_seconds', svc_timeout VARCHAR(64) PATH '$.timeout',
    svc_memory BIGINT PATH '$.memory')) AS s
WHERE CAST(s.svc_type AS BINARY) = CAST(:type AS BINARY)
