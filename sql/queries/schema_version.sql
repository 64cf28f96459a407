-- The highest applied migration, from the primary key, the one read a
-- command makes to know the schema is up to date.
SELECT MAX(version) FROM schema_migrations
