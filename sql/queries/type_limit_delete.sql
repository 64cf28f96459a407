DELETE FROM type_limits
WHERE type = :type
