-- Node 1.1 (release 0.2, API 1.31): the implementation of each hardware
-- interface a node uses. Additive and nullable: rows written by release 0.1
-- (Node 1.0) keep NULL until the backfill_node_interfaces online migration
-- sets each hardware type's defaults. One statement, so it applies whole or
-- not at all and a re-run after a failure is safe (MySQL 8 has no ADD
-- COLUMN IF NOT EXISTS). InnoDB appends nullable columns without copying
-- the table (instant ADD COLUMN, MySQL 8.0.12+ and MariaDB 10.3+).

ALTER TABLE nodes
    ADD COLUMN boot_interface VARCHAR(255),
    ADD COLUMN console_interface VARCHAR(255),
    ADD COLUMN deploy_interface VARCHAR(255),
    ADD COLUMN inspect_interface VARCHAR(255),
    ADD COLUMN management_interface VARCHAR(255),
    ADD COLUMN power_interface VARCHAR(255),
    ADD COLUMN raid_interface VARCHAR(255),
    ADD COLUMN vendor_interface VARCHAR(255);
