-- Allocations (Allocation 1.0, release 0.3, API 1.52) and the node's
-- allocation_id (Node 1.2). A new table and a nullable column: additive.
-- node_id has no foreign key, as Ironic's: a node deleted in maintenance
-- leaves its allocation behind.

CREATE TABLE allocations (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    uuid VARCHAR(36) NOT NULL,
    name VARCHAR(255),
    node_id BIGINT,
    state VARCHAR(15) NOT NULL DEFAULT 'allocating',
    owner VARCHAR(255),
    last_error TEXT,
    resource_class VARCHAR(80),
    traits TEXT,
    candidate_nodes TEXT,
    extra TEXT,
    conductor_affinity BIGINT,
    created_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
    updated_at TIMESTAMP,
    version VARCHAR(15),
    CONSTRAINT uniq_allocations0uuid UNIQUE (uuid),
    CONSTRAINT uniq_allocations0name UNIQUE (name)
);

--bun:split

CREATE INDEX allocations_node_id_idx ON allocations (node_id);

--bun:split

CREATE INDEX allocations_state_idx ON allocations (state);

--bun:split

ALTER TABLE nodes ADD COLUMN allocation_id BIGINT;
