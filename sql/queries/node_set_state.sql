-- Only the node's health. The maintenance flag is the operator's to set.
UPDATE nodes SET state = :state WHERE name = :name
