-- Initial schema, PostgreSQL. Runs in one transaction (.tx.): all or nothing.
-- Column names are the canonical object field names; every object table
-- has a nullable version VARCHAR(15) (the object version a row was written at).

CREATE TABLE chassis (
    id BIGSERIAL PRIMARY KEY,
    uuid VARCHAR(36) NOT NULL,
    description VARCHAR(255),
    extra TEXT,
    created_at TIMESTAMPTZ NOT NULL DEFAULT CURRENT_TIMESTAMP,
    updated_at TIMESTAMPTZ,
    version VARCHAR(15),
    CONSTRAINT uniq_chassis0uuid UNIQUE (uuid)
);

--bun:split

CREATE TABLE nodes (
    id BIGSERIAL PRIMARY KEY,
    uuid VARCHAR(36) NOT NULL,
    name VARCHAR(255),
    chassis_id BIGINT,
    driver VARCHAR(255) NOT NULL,
    driver_info TEXT,
    driver_internal_info TEXT,
    extra TEXT,
    instance_info TEXT,
    properties TEXT,
    clean_step TEXT,
    raid_config TEXT,
    target_raid_config TEXT,
    instance_uuid VARCHAR(36),
    last_error TEXT,
    maintenance BOOLEAN NOT NULL DEFAULT FALSE,
    maintenance_reason TEXT,
    power_state VARCHAR(255),
    target_power_state VARCHAR(255),
    provision_state VARCHAR(255),
    target_provision_state VARCHAR(255),
    provision_updated_at TIMESTAMPTZ,
    inspection_started_at TIMESTAMPTZ,
    inspection_finished_at TIMESTAMPTZ,
    network_interface VARCHAR(255),
    resource_class VARCHAR(255),
    console_enabled BOOLEAN NOT NULL DEFAULT FALSE,
    conductor_affinity BIGINT,
    conductor_group VARCHAR(255) NOT NULL DEFAULT '',
    reservation VARCHAR(255),
    reservation_expires_at TIMESTAMPTZ,
    reservation_epoch BIGINT NOT NULL DEFAULT 0,
    created_at TIMESTAMPTZ NOT NULL DEFAULT CURRENT_TIMESTAMP,
    updated_at TIMESTAMPTZ,
    version VARCHAR(15),
    CONSTRAINT uniq_nodes0uuid UNIQUE (uuid),
    CONSTRAINT uniq_nodes0name UNIQUE (name),
    CONSTRAINT uniq_nodes0instance_uuid UNIQUE (instance_uuid),
    CONSTRAINT fk_nodes_chassis_id FOREIGN KEY (chassis_id) REFERENCES chassis (id)
);

--bun:split

CREATE INDEX nodes_provision_state_idx ON nodes (provision_state);

--bun:split

CREATE INDEX nodes_conductor_group_idx ON nodes (conductor_group);

--bun:split

CREATE INDEX nodes_reservation_idx ON nodes (reservation);

--bun:split

CREATE INDEX nodes_driver_idx ON nodes (driver);

--bun:split

CREATE INDEX nodes_chassis_id_idx ON nodes (chassis_id);

--bun:split

CREATE TABLE portgroups (
    id BIGSERIAL PRIMARY KEY,
    uuid VARCHAR(36) NOT NULL,
    name VARCHAR(255),
    address VARCHAR(255),
    node_id BIGINT NOT NULL,
    extra TEXT,
    internal_info TEXT,
    standalone_ports_supported BOOLEAN NOT NULL DEFAULT TRUE,
    mode VARCHAR(255),
    properties TEXT,
    created_at TIMESTAMPTZ NOT NULL DEFAULT CURRENT_TIMESTAMP,
    updated_at TIMESTAMPTZ,
    version VARCHAR(15),
    CONSTRAINT uniq_portgroups0uuid UNIQUE (uuid),
    CONSTRAINT uniq_portgroups0name UNIQUE (name),
    CONSTRAINT uniq_portgroups0address UNIQUE (address),
    CONSTRAINT fk_portgroups_node_id FOREIGN KEY (node_id) REFERENCES nodes (id)
);

--bun:split

CREATE INDEX portgroups_node_id_idx ON portgroups (node_id);

--bun:split

CREATE TABLE ports (
    id BIGSERIAL PRIMARY KEY,
    uuid VARCHAR(36) NOT NULL,
    address VARCHAR(255) NOT NULL,
    node_id BIGINT NOT NULL,
    portgroup_id BIGINT,
    extra TEXT,
    local_link_connection TEXT,
    pxe_enabled BOOLEAN NOT NULL DEFAULT TRUE,
    internal_info TEXT,
    created_at TIMESTAMPTZ NOT NULL DEFAULT CURRENT_TIMESTAMP,
    updated_at TIMESTAMPTZ,
    version VARCHAR(15),
    CONSTRAINT uniq_ports0uuid UNIQUE (uuid),
    CONSTRAINT uniq_ports0address UNIQUE (address),
    CONSTRAINT fk_ports_node_id FOREIGN KEY (node_id) REFERENCES nodes (id),
    CONSTRAINT fk_ports_portgroup_id FOREIGN KEY (portgroup_id) REFERENCES portgroups (id)
);

--bun:split

CREATE INDEX ports_node_id_idx ON ports (node_id);

--bun:split

CREATE INDEX ports_portgroup_id_idx ON ports (portgroup_id);

--bun:split

CREATE TABLE conductors (
    id BIGSERIAL PRIMARY KEY,
    hostname VARCHAR(255) NOT NULL,
    conductor_group VARCHAR(255) NOT NULL DEFAULT '',
    online BOOLEAN NOT NULL DEFAULT FALSE,
    drivers TEXT,
    created_at TIMESTAMPTZ NOT NULL DEFAULT CURRENT_TIMESTAMP,
    updated_at TIMESTAMPTZ,
    version VARCHAR(15),
    CONSTRAINT uniq_conductors0hostname UNIQUE (hostname)
);

--bun:split

CREATE TABLE conductor_hardware_interfaces (
    id BIGSERIAL PRIMARY KEY,
    conductor_id BIGINT NOT NULL,
    hardware_type VARCHAR(255) NOT NULL,
    interface_type VARCHAR(64) NOT NULL,
    interface_name VARCHAR(255) NOT NULL,
    is_default BOOLEAN NOT NULL DEFAULT FALSE,
    created_at TIMESTAMPTZ NOT NULL DEFAULT CURRENT_TIMESTAMP,
    updated_at TIMESTAMPTZ,
    CONSTRAINT uniq_conductor_hardware_interfaces0conductor_id_hardware_type UNIQUE (conductor_id, hardware_type, interface_type, interface_name),
    CONSTRAINT fk_conductor_hardware_interfaces_conductor_id FOREIGN KEY (conductor_id) REFERENCES conductors (id)
);

--bun:split

CREATE TABLE services (
    id BIGSERIAL PRIMARY KEY,
    hostname VARCHAR(255) NOT NULL,
    "binary" VARCHAR(255) NOT NULL,
    "release" VARCHAR(255) NOT NULL,
    service_version INTEGER NOT NULL,
    pin VARCHAR(255),
    online BOOLEAN NOT NULL DEFAULT FALSE,
    created_at TIMESTAMPTZ NOT NULL DEFAULT CURRENT_TIMESTAMP,
    updated_at TIMESTAMPTZ NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT uniq_services0hostname_binary UNIQUE (hostname, "binary")
);
