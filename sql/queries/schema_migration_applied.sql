SELECT COUNT(*) FROM schema_migrations WHERE version = :version
