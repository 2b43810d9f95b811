-- The cluster's finalized-release watermark (ARCHITECTURE §4): one row,
-- id 1, holding the newest release whose object versions services may now
-- write, and its service version. Services older than it refuse to start.
-- A new table: additive.

CREATE TABLE finalized_release (
    id INTEGER NOT NULL PRIMARY KEY,
    "release" VARCHAR(255) NOT NULL,
    service_version INTEGER NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL DEFAULT CURRENT_TIMESTAMP
);
