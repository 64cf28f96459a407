SELECT value FROM settings WHERE name = :name
