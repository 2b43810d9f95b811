-- BIOSSetting 1.0 (release 0.3, API 1.40): a node's BIOS settings as its
-- bios interface last read them, one row per (node, name). A new table, so
-- additive. node_id has no foreign key on purpose, as node_history: a
-- release 0.2 conductor deletes a node without knowing this table and must
-- not fail; a 0.3 node delete removes the node's rows.

CREATE TABLE IF NOT EXISTS bios_settings (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    node_id BIGINT NOT NULL,
    name VARCHAR(255) NOT NULL,
    value LONGTEXT,
    created_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    updated_at DATETIME(6),
    version VARCHAR(15),
    CONSTRAINT uniq_bios_settings0node_id0name UNIQUE (node_id, name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
