-- Release 0.3: node traits (API 1.37, Trait 1.0), deploy templates (API
-- 1.55, DeployTemplate 1.0) and runbooks (API 1.92, Runbook 1.0). New
-- tables only: additive. A template's or runbook's steps are a JSON list in
-- its row, read and written with it.

CREATE TABLE node_traits (
    id BIGSERIAL PRIMARY KEY,
    node_id BIGINT NOT NULL,
    trait VARCHAR(255) NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT CURRENT_TIMESTAMP,
    updated_at TIMESTAMPTZ,
    version VARCHAR(15),
    CONSTRAINT uniq_node_traits0node_id0trait UNIQUE (node_id, trait),
    CONSTRAINT fk_node_traits_node_id FOREIGN KEY (node_id) REFERENCES nodes (id)
);

--bun:split

CREATE INDEX node_traits_trait_idx ON node_traits (trait);

--bun:split

CREATE TABLE deploy_templates (
    id BIGSERIAL PRIMARY KEY,
    uuid VARCHAR(36) NOT NULL,
    name VARCHAR(255) NOT NULL,
    steps TEXT,
    extra TEXT,
    created_at TIMESTAMPTZ NOT NULL DEFAULT CURRENT_TIMESTAMP,
    updated_at TIMESTAMPTZ,
    version VARCHAR(15),
    CONSTRAINT uniq_deploy_templates0uuid UNIQUE (uuid),
    CONSTRAINT uniq_deploy_templates0name UNIQUE (name)
);

--bun:split

CREATE TABLE runbooks (
    id BIGSERIAL PRIMARY KEY,
    uuid VARCHAR(36) NOT NULL,
    name VARCHAR(255) NOT NULL,
    steps TEXT,
    disable_ramdisk BOOLEAN,
    extra TEXT,
    public BOOLEAN,
    owner VARCHAR(255),
    created_at TIMESTAMPTZ NOT NULL DEFAULT CURRENT_TIMESTAMP,
    updated_at TIMESTAMPTZ,
    version VARCHAR(15),
    CONSTRAINT uniq_runbooks0uuid UNIQUE (uuid),
    CONSTRAINT uniq_runbooks0name UNIQUE (name)
);
