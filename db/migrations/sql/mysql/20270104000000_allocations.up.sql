-- Allocations (Allocation 1.0, release 0.3, API 1.52) and the node's
-- allocation_id (Node 1.2). A new table and a nullable column: additive.
-- node_id has no foreign key, as Ironic's: a node deleted in maintenance
-- leaves its allocation behind. Each statement may be re-run after a
-- partial failure (IF NOT EXISTS; the ALTER is one statement, instant on
-- InnoDB for a nullable column).

CREATE TABLE IF NOT EXISTS allocations (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    uuid VARCHAR(36) NOT NULL,
    name VARCHAR(255),
    node_id BIGINT,
    state VARCHAR(15) NOT NULL DEFAULT 'allocating',
    owner VARCHAR(255),
    last_error LONGTEXT,
    resource_class VARCHAR(80),
    traits LONGTEXT,
    candidate_nodes LONGTEXT,
    extra LONGTEXT,
    conductor_affinity BIGINT,
    created_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    updated_at DATETIME(6),
    version VARCHAR(15),
    CONSTRAINT uniq_allocations0uuid UNIQUE (uuid),
    CONSTRAINT uniq_allocations0name UNIQUE (name),
    INDEX allocations_node_id_idx (node_id),
    INDEX allocations_state_idx (state)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

--bun:split

ALTER TABLE nodes ADD COLUMN allocation_id BIGINT;
