-- Volume connectors and targets (release 0.3, REST API 1.32; objects
-- VolumeConnector 1.0 and VolumeTarget 1.0). New tables: additive. A
-- connector's (type, connector_id) is unique across nodes and a target's
-- boot_index unique per node, as in Ironic's schema (its strings are 255
-- wide here; the API refuses longer ones with 400).

CREATE TABLE volume_connectors (
    id BIGSERIAL PRIMARY KEY,
    uuid VARCHAR(36) NOT NULL,
    node_id BIGINT NOT NULL,
    type VARCHAR(255) NOT NULL,
    connector_id VARCHAR(255) NOT NULL,
    extra TEXT,
    created_at TIMESTAMPTZ NOT NULL DEFAULT CURRENT_TIMESTAMP,
    updated_at TIMESTAMPTZ,
    version VARCHAR(15),
    CONSTRAINT uniq_volumeconnectors0uuid UNIQUE (uuid),
    CONSTRAINT uniq_volumeconnectors0type0connector_id UNIQUE (type, connector_id),
    CONSTRAINT fk_volume_connectors_node_id FOREIGN KEY (node_id) REFERENCES nodes (id)
);

--bun:split

CREATE TABLE volume_targets (
    id BIGSERIAL PRIMARY KEY,
    uuid VARCHAR(36) NOT NULL,
    node_id BIGINT NOT NULL,
    volume_type VARCHAR(255) NOT NULL,
    properties TEXT,
    boot_index INTEGER NOT NULL,
    volume_id VARCHAR(255) NOT NULL,
    extra TEXT,
    created_at TIMESTAMPTZ NOT NULL DEFAULT CURRENT_TIMESTAMP,
    updated_at TIMESTAMPTZ,
    version VARCHAR(15),
    CONSTRAINT uniq_volumetargets0uuid UNIQUE (uuid),
    CONSTRAINT uniq_volumetargets0node_id0boot_index UNIQUE (node_id, boot_index),
    CONSTRAINT fk_volume_targets_node_id FOREIGN KEY (node_id) REFERENCES nodes (id)
);

--bun:split

CREATE INDEX volume_connectors_node_id_idx ON volume_connectors (node_id);
