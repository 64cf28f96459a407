-- Only a node that is gone (OFFLINE, or not seen for StaleAfter), as
-- node_takeover judges it. Changing no row means it is live or unknown.
DELETE FROM nodes
WHERE name = :name
  AND NOT (state <> 'OFFLINE' AND last_seen > {{nowPlus ":stale_offset_seconds"}})
