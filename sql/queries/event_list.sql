-- Newest first, so LIMIT keeps the newest events; the store returns them
-- oldest first. A listing of one job's events (event_list_job) or one
-- node's (event_list_node) has a query of its own, each on its index; a
-- filter switched off by a bound flag would keep SQLite from using one.
SELECT {{template "event_columns"}}
FROM events
WHERE {{template "event_list_rest"}}
