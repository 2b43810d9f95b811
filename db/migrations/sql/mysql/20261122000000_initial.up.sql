-- Initial schema, MySQL/MariaDB. MySQL auto-commits DDL, so this file cannot
-- run in one transaction; instead every statement is CREATE TABLE IF NOT
-- EXISTS with its indexes inline, so a run that failed part-way is finished
-- by running it again. utf8mb4_bin keeps unique names case-sensitive, as on
-- the other dialects.
-- Column names are the canonical object field names; every object table
-- has a nullable version VARCHAR(15) (the object version a row was written at).

CREATE TABLE IF NOT EXISTS chassis (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    uuid VARCHAR(36) NOT NULL,
    description VARCHAR(255),
    extra LONGTEXT,
    created_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    updated_at DATETIME(6),
    version VARCHAR(15),
    CONSTRAINT uniq_chassis0uuid UNIQUE (uuid)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

--bun:split

CREATE TABLE IF NOT EXISTS nodes (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    uuid VARCHAR(36) NOT NULL,
    name VARCHAR(255),
    chassis_id BIGINT,
    driver VARCHAR(255) NOT NULL,
    driver_info LONGTEXT,
    driver_internal_info LONGTEXT,
    extra LONGTEXT,
    instance_info LONGTEXT,
    properties LONGTEXT,
    clean_step LONGTEXT,
    raid_config LONGTEXT,
    target_raid_config LONGTEXT,
    instance_uuid VARCHAR(36),
    last_error TEXT,
    maintenance BOOLEAN NOT NULL DEFAULT FALSE,
    maintenance_reason TEXT,
    power_state VARCHAR(255),
    target_power_state VARCHAR(255),
    provision_state VARCHAR(255),
    target_provision_state VARCHAR(255),
    provision_updated_at DATETIME(6),
    inspection_started_at DATETIME(6),
    inspection_finished_at DATETIME(6),
    network_interface VARCHAR(255),
    resource_class VARCHAR(255),
    console_enabled BOOLEAN NOT NULL DEFAULT FALSE,
    conductor_affinity BIGINT,
    conductor_group VARCHAR(255) NOT NULL DEFAULT '',
    reservation VARCHAR(255),
    reservation_expires_at DATETIME(6),
    reservation_epoch BIGINT NOT NULL DEFAULT 0,
    created_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    updated_at DATETIME(6),
    version VARCHAR(15),
    CONSTRAINT uniq_nodes0uuid UNIQUE (uuid),
    CONSTRAINT uniq_nodes0name UNIQUE (name),
    CONSTRAINT uniq_nodes0instance_uuid UNIQUE (instance_uuid),
    CONSTRAINT fk_nodes_chassis_id FOREIGN KEY (chassis_id) REFERENCES chassis (id),
    INDEX nodes_provision_state_idx (provision_state),
    INDEX nodes_conductor_group_idx (conductor_group),
    INDEX nodes_reservation_idx (reservation),
    INDEX nodes_driver_idx (driver)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

--bun:split

CREATE TABLE IF NOT EXISTS portgroups (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    uuid VARCHAR(36) NOT NULL,
    name VARCHAR(255),
    address VARCHAR(255),
    node_id BIGINT NOT NULL,
    extra LONGTEXT,
    internal_info LONGTEXT,
    standalone_ports_supported BOOLEAN NOT NULL DEFAULT TRUE,
    mode VARCHAR(255),
    properties LONGTEXT,
    created_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    updated_at DATETIME(6),
    version VARCHAR(15),
    CONSTRAINT uniq_portgroups0uuid UNIQUE (uuid),
    CONSTRAINT uniq_portgroups0name UNIQUE (name),
    CONSTRAINT uniq_portgroups0address UNIQUE (address),
    CONSTRAINT fk_portgroups_node_id FOREIGN KEY (node_id) REFERENCES nodes (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

--bun:split

CREATE TABLE IF NOT EXISTS ports (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    uuid VARCHAR(36) NOT NULL,
    address VARCHAR(255) NOT NULL,
    node_id BIGINT NOT NULL,
    portgroup_id BIGINT,
    extra LONGTEXT,
    local_link_connection LONGTEXT,
    pxe_enabled BOOLEAN NOT NULL DEFAULT TRUE,
    internal_info LONGTEXT,
    created_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    updated_at DATETIME(6),
    version VARCHAR(15),
    CONSTRAINT uniq_ports0uuid UNIQUE (uuid),
    CONSTRAINT uniq_ports0address UNIQUE (address),
    CONSTRAINT fk_ports_node_id FOREIGN KEY (node_id) REFERENCES nodes (id),
    CONSTRAINT fk_ports_portgroup_id FOREIGN KEY (portgroup_id) REFERENCES portgroups (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

--bun:split

CREATE TABLE IF NOT EXISTS conductors (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    hostname VARCHAR(255) NOT NULL,
    conductor_group VARCHAR(255) NOT NULL DEFAULT '',
    online BOOLEAN NOT NULL DEFAULT FALSE,
    drivers LONGTEXT,
    created_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    updated_at DATETIME(6),
    version VARCHAR(15),
    CONSTRAINT uniq_conductors0hostname UNIQUE (hostname)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

--bun:split

CREATE TABLE IF NOT EXISTS conductor_hardware_interfaces (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    conductor_id BIGINT NOT NULL,
    hardware_type VARCHAR(255) NOT NULL,
    interface_type VARCHAR(64) NOT NULL,
    interface_name VARCHAR(255) NOT NULL,
    is_default BOOLEAN NOT NULL DEFAULT FALSE,
    created_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    updated_at DATETIME(6),
    CONSTRAINT uniq_conductor_hardware_interfaces0conductor_id_hardware_type UNIQUE (conductor_id, hardware_type, interface_type, interface_name),
    CONSTRAINT fk_conductor_hardware_interfaces_conductor_id FOREIGN KEY (conductor_id) REFERENCES conductors (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

--bun:split

CREATE TABLE IF NOT EXISTS services (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    hostname VARCHAR(255) NOT NULL,
    `binary` VARCHAR(255) NOT NULL,
    `release` VARCHAR(255) NOT NULL,
    service_version INTEGER NOT NULL,
    pin VARCHAR(255),
    online BOOLEAN NOT NULL DEFAULT FALSE,
    created_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    updated_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    CONSTRAINT uniq_services0hostname_binary UNIQUE (hostname, `binary`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
