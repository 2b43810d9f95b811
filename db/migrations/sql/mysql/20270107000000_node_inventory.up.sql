-- The hardware inventory and plugin data in-band inspection stored for a
-- node (Ironic's node_inventory): one row per node, replaced by the next
-- inspection, deleted with the node. Not a versioned object: the
-- conductor writes it, the API reads it, it never crosses RPC.
-- A new table: additive, and every column but the keys is nullable. One
-- statement with its index inline, so a re-run after a failure is safe.

CREATE TABLE IF NOT EXISTS node_inventory (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    node_id BIGINT NOT NULL,
    inventory_data LONGTEXT,
    plugin_data LONGTEXT,
    created_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    updated_at DATETIME(6),
    UNIQUE INDEX node_inventory_node_id_idx (node_id),
    CONSTRAINT fk_node_inventory_node_id FOREIGN KEY (node_id) REFERENCES nodes (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
