-- What each conductor negotiated with its driver plugins, one row per
-- (conductor, hardware type), or per refused plugin with hardware_type ''.
-- A new table: additive, and every column but the keys is nullable. One
-- statement with its index inline, so a re-run after a failure is safe.

CREATE TABLE IF NOT EXISTS conductor_plugins (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    conductor_id BIGINT NOT NULL,
    hardware_type VARCHAR(255) NOT NULL DEFAULT '',
    driver VARCHAR(255),
    status VARCHAR(32),
    plugin_name VARCHAR(255),
    plugin_version VARCHAR(255),
    protocol INTEGER,
    interfaces TEXT,
    capabilities TEXT,
    path VARCHAR(1024),
    built_in BOOLEAN,
    pinned BOOLEAN,
    error TEXT,
    created_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    updated_at DATETIME(6),
    INDEX conductor_plugins_conductor_id_idx (conductor_id),
    CONSTRAINT fk_conductor_plugins_conductor_id FOREIGN KEY (conductor_id) REFERENCES conductors (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
