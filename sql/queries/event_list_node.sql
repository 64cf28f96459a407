SELECT {{template "event_columns"}}
FROM events
WHERE node = :node
  AND {{template "event_list_rest"}}
