-- The services of the nodes that offer jobs of the type, one row a node
-- (job_submit), with whether the node shows ONLINE (not in maintenance), its
-- max load, and the service's load, timeout and memory limit. old_form
-- marks a service stored by a release that kept its timeout as text only.
SELECT n.name,
       CASE WHEN n.state = 'ONLINE' AND NOT n.maintenance THEN 1 ELSE 0 END AS online,
       n.max_load,
       CAST(s ->> 'load' AS double precision) AS svc_load,
       CAST(s ->> 'timeout_seconds' AS double precision) AS svc_timeout_seconds,
       CAST(s ->> 'memory' AS bigint) AS svc_memory,
       CASE WHEN s -> 'timeout' IS NOT NULL AND s -> 'timeout_seconds' IS NULL THEN 1 ELSE 0 END AS old_form
FROM nodes n CROSS JOIN LATERAL jsonb_array_elements(CAST(n.services AS jsonb)) AS s
WHERE s ->> 'type' = :type
