-- Two processes racing both succeed, and both then read the first value.
INSERT INTO settings (name, value) VALUES (:name, :value)
ON CONFLICT (name) DO NOTHING
