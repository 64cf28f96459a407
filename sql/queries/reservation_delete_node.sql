DELETE FROM reservations
WHERE node = :node
