DELETE FROM schedules
WHERE name = :name
