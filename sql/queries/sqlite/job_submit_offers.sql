-- The services of the nodes that offer jobs of the type, one row a node
-- (job_submit), with whether the node shows ONLINE (not in maintenance), its
-- max load, and the service's load, timeout and memory limit. old_form
-- marks a service stored by a release that kept its timeout as text only.
SELECT n.name,
       CASE WHEN n.state = 'ONLINE' AND NOT n.maintenance THEN 1 ELSE 0 END AS online,
       n.max_load,
       json_extract(s.value, '$.load') AS svc_load,
       json_extract(s.value, '$.timeout_seconds') AS svc_timeout_seconds,
       json_extract(s.value, '$.memory') AS svc_memory,
       json_type(s.value, '$.timeout') IS NOT NULL AND json_type(s.value, '$.timeout_seconds') IS NULL AS old_form
FROM nodes n, json_each(n.services) AS s
WHERE json_extract(s.value, '$.type') = :type
