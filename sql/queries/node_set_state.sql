UPDATE nodes SET state = :state WHERE name = :name
