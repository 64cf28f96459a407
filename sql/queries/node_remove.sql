-- A node's row, only while it still names the process the caller read and
-- was last seen no later than the caller read it. Changing no row means it
-- changed since, or is gone.
DELETE FROM nodes
WHERE name = :name
  AND host_id = :host_id AND pid = :pid AND proc_start = :proc_start
  AND last_seen <= :last_seen
