INSERT INTO schema_migrations (version, name, applied_at) VALUES (:version, :name, {{now}})
