-- NodeHistory 1.0 (release 0.3, API 1.78): what happened to a node, as
-- conductors record it (failures, state transitions, takeovers). A new
-- table, so additive. node_id has no foreign key on purpose: a release 0.2
-- conductor deletes a node without knowing this table, and must not fail;
-- the conductors' history clean-up removes rows whose node is gone.

CREATE TABLE node_history (
    id BIGSERIAL PRIMARY KEY,
    uuid VARCHAR(36) NOT NULL,
    node_id BIGINT NOT NULL,
    conductor VARCHAR(255),
    event_type VARCHAR(255),
    severity VARCHAR(255),
    event TEXT,
    user_name VARCHAR(64),
    created_at TIMESTAMPTZ NOT NULL DEFAULT CURRENT_TIMESTAMP,
    updated_at TIMESTAMPTZ,
    version VARCHAR(15),
    CONSTRAINT uniq_history0uuid UNIQUE (uuid)
);

--bun:split

CREATE INDEX history_node_id_idx ON node_history (node_id, id);
