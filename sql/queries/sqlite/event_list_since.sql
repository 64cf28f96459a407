-- The events since a time, on the index of their times (events -f reads
-- the last minute again at every poll). SQLite without statistics would
-- rather walk the ids down from the newest, through the whole table.
SELECT {{template "event_columns"}}
FROM events INDEXED BY events_created_at
WHERE created_at >= :since
  AND {{template "event_list_rest"}}
