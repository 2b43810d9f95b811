-- The cluster's finalized-release watermark (ARCHITECTURE §4): one row,
-- id 1, holding the newest release whose object versions services may now
-- write, and its service version. Services older than it refuse to start.
-- A new table: additive. One statement, so a re-run after a failure is safe.

CREATE TABLE IF NOT EXISTS finalized_release (
    id INTEGER NOT NULL PRIMARY KEY,
    `release` VARCHAR(255) NOT NULL,
    service_version INTEGER NOT NULL,
    updated_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
