-- Only the operator's flag. The health state is for the node and the
-- heartbeat monitor to set.
UPDATE nodes SET maintenance = :maintenance WHERE name = :name
