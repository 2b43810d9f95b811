-- Node 1.2 (release 0.3, API 1.87): service_step, the service step a node
-- in servicing runs, as Ironic's nodes.service_step (a JSON text). Additive
-- and nullable: rows written at Node 1.0/1.1 have none, read as {}.
-- InnoDB appends a nullable column without copying the table (instant ADD
-- COLUMN).

ALTER TABLE nodes ADD COLUMN service_step LONGTEXT;
