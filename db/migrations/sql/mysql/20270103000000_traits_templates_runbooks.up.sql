-- Release 0.3: node traits (API 1.37, Trait 1.0), deploy templates (API
-- 1.55, DeployTemplate 1.0) and runbooks (API 1.92, Runbook 1.0). New
-- tables only: additive. A template's or runbook's steps are a JSON list in
-- its row, read and written with it.
-- MySQL commits each DDL statement: every statement is CREATE TABLE IF NOT
-- EXISTS with its indexes inline, so a re-run after a failure is safe.

CREATE TABLE IF NOT EXISTS node_traits (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    node_id BIGINT NOT NULL,
    trait VARCHAR(255) NOT NULL,
    created_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    updated_at DATETIME(6),
    version VARCHAR(15),
    CONSTRAINT uniq_node_traits0node_id0trait UNIQUE (node_id, trait),
    INDEX node_traits_trait_idx (trait),
    CONSTRAINT fk_node_traits_node_id FOREIGN KEY (node_id) REFERENCES nodes (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

--bun:split

CREATE TABLE IF NOT EXISTS deploy_templates (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    uuid VARCHAR(36) NOT NULL,
    name VARCHAR(255) NOT NULL,
    steps TEXT,
    extra TEXT,
    created_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    updated_at DATETIME(6),
    version VARCHAR(15),
    CONSTRAINT uniq_deploy_templates0uuid UNIQUE (uuid),
    CONSTRAINT uniq_deploy_templates0name UNIQUE (name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

--bun:split

CREATE TABLE IF NOT EXISTS runbooks (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    uuid VARCHAR(36) NOT NULL,
    name VARCHAR(255) NOT NULL,
    steps TEXT,
    disable_ramdisk BOOLEAN,
    extra TEXT,
    public BOOLEAN,
    owner VARCHAR(255),
    created_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    updated_at DATETIME(6),
    version VARCHAR(15),
    CONSTRAINT uniq_runbooks0uuid UNIQUE (uuid),
    CONSTRAINT uniq_runbooks0name UNIQUE (name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
