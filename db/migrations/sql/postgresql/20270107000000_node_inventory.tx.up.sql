-- The hardware inventory and plugin data in-band inspection stored for a
-- node (Ironic's node_inventory): one row per node, replaced by the next
-- inspection, deleted with the node. Not a versioned object: the
-- conductor writes it, the API reads it, it never crosses RPC.
-- A new table: additive, and every column but the keys is nullable.

CREATE TABLE node_inventory (
    id BIGSERIAL PRIMARY KEY,
    node_id BIGINT NOT NULL,
    inventory_data TEXT,
    plugin_data TEXT,
    created_at TIMESTAMPTZ NOT NULL DEFAULT CURRENT_TIMESTAMP,
    updated_at TIMESTAMPTZ,
    CONSTRAINT fk_node_inventory_node_id FOREIGN KEY (node_id) REFERENCES nodes (id)
);

--bun:split
CREATE UNIQUE INDEX node_inventory_node_id_idx ON node_inventory (node_id);
