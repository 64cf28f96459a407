CREATE TABLE IF NOT EXISTS schema_migrations (
    version    INT          NOT NULL PRIMARY KEY,
    name       VARCHAR(255) NOT NULL,
    applied_at DATETIME(6)  NOT NULL
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin
