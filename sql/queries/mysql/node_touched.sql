-- What a node learns from its touch (node_touch), read after it in its
-- transaction.
SELECT state, maintenance FROM nodes WHERE name = :name
