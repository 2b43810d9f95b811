-- NodeHistory 1.0 (release 0.3, API 1.78): what happened to a node, as
-- conductors record it (failures, state transitions, takeovers). A new
-- table, so additive. node_id has no foreign key on purpose: a release 0.2
-- conductor deletes a node without knowing this table, and must not fail;
-- the conductors' history clean-up removes rows whose node is gone.
-- CREATE TABLE IF NOT EXISTS with its indexes inline, so a re-run after a
-- failure is safe.

CREATE TABLE IF NOT EXISTS node_history (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    uuid VARCHAR(36) NOT NULL,
    node_id BIGINT NOT NULL,
    conductor VARCHAR(255),
    event_type VARCHAR(255),
    severity VARCHAR(255),
    event LONGTEXT,
    user_name VARCHAR(64),
    created_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    updated_at DATETIME(6),
    version VARCHAR(15),
    CONSTRAINT uniq_history0uuid UNIQUE (uuid),
    INDEX history_node_id_idx (node_id, id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
