-- Two processes racing both succeed, and both then read the first value.
INSERT IGNORE INTO settings (name, value) VALUES (:name, :value)
