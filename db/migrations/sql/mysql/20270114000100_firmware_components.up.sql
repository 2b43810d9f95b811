-- FirmwareComponent 1.0 (release 0.3, API 1.86): a node's firmware
-- components as its firmware interface last read them, one row per (node,
-- component); Ironic's firmware_information table. A new table, so
-- additive. node_id has no foreign key on purpose, as bios_settings: a
-- release 0.2 conductor deletes a node without knowing this table and must
-- not fail; a 0.3 node delete removes the node's rows.

CREATE TABLE IF NOT EXISTS firmware_information (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    node_id BIGINT NOT NULL,
    component VARCHAR(255) NOT NULL,
    initial_version VARCHAR(255) NOT NULL,
    current_version VARCHAR(255),
    last_version_flashed VARCHAR(255),
    created_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    updated_at DATETIME(6),
    version VARCHAR(15),
    CONSTRAINT uniq_firmware_information0node_id0component UNIQUE (node_id, component)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
