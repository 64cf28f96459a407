SELECT {{template "event_columns"}}
FROM events
WHERE job_id = :job_id AND (:node = '' OR node = :node)
  AND {{template "event_list_rest"}}
