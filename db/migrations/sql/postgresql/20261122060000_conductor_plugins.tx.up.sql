-- What each conductor negotiated with its driver plugins, one row per
-- (conductor, hardware type), or per refused plugin with hardware_type ''.
-- A new table: additive, and every column but the keys is nullable.

CREATE TABLE conductor_plugins (
    id BIGSERIAL PRIMARY KEY,
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
    created_at TIMESTAMPTZ NOT NULL DEFAULT CURRENT_TIMESTAMP,
    updated_at TIMESTAMPTZ,
    CONSTRAINT fk_conductor_plugins_conductor_id FOREIGN KEY (conductor_id) REFERENCES conductors (id)
);

--bun:split
CREATE INDEX conductor_plugins_conductor_id_idx ON conductor_plugins (conductor_id);
