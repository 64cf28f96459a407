-- The events since a time, on the index of their times (events -f reads
-- the last minute again at every poll).
SELECT {{template "event_columns"}}
FROM events
WHERE created_at >= :since
  AND {{template "event_list_rest"}}
