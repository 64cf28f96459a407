SELECT COUNT(*) FROM pg_catalog.pg_tables
WHERE schemaname = current_schema() AND tablename = 'schema_migrations'
