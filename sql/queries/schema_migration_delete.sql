DELETE FROM schema_migrations WHERE version = :version
