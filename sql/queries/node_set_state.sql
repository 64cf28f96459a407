-- Only the node's health. The maintenance flag is the operator's to set. A
-- health write ends any heartbeat watch, as the node is now what it is set to.
UPDATE nodes SET state = :state, beat_missed_at = NULL WHERE name = :name
