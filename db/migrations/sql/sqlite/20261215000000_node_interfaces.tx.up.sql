-- Node 1.1 (release 0.2, API 1.31): the implementation of each hardware
-- interface a node uses. Additive and nullable: rows written by release 0.1
-- (Node 1.0) keep NULL until the backfill_node_interfaces online migration
-- sets each hardware type's defaults. SQLite adds one column per ALTER
-- TABLE; the file runs in one transaction.

ALTER TABLE nodes ADD COLUMN boot_interface VARCHAR(255);

--bun:split

ALTER TABLE nodes ADD COLUMN console_interface VARCHAR(255);

--bun:split

ALTER TABLE nodes ADD COLUMN deploy_interface VARCHAR(255);

--bun:split

ALTER TABLE nodes ADD COLUMN inspect_interface VARCHAR(255);

--bun:split

ALTER TABLE nodes ADD COLUMN management_interface VARCHAR(255);

--bun:split

ALTER TABLE nodes ADD COLUMN power_interface VARCHAR(255);

--bun:split

ALTER TABLE nodes ADD COLUMN raid_interface VARCHAR(255);

--bun:split

ALTER TABLE nodes ADD COLUMN vendor_interface VARCHAR(255);
