-- BIOSSetting 1.0 (release 0.3, API 1.40): a node's BIOS settings as its
-- bios interface last read them, one row per (node, name). A new table, so
-- additive. node_id has no foreign key on purpose, as node_history: a
-- release 0.2 conductor deletes a node without knowing this table and must
-- not fail; a 0.3 node delete removes the node's rows.

CREATE TABLE bios_settings (
    id BIGSERIAL PRIMARY KEY,
    node_id BIGINT NOT NULL,
    name VARCHAR(255) NOT NULL,
    value TEXT,
    created_at TIMESTAMPTZ NOT NULL DEFAULT CURRENT_TIMESTAMP,
    updated_at TIMESTAMPTZ,
    version VARCHAR(15),
    CONSTRAINT uniq_bios_settings0node_id0name UNIQUE (node_id, name)
);
