-- Node 1.2 (release 0.3, API 1.50 and 1.65): the project owning a node and
-- the project it is leased to, as Ironic's owner and lessee (VARCHAR(255)).
-- Additive and nullable: rows written at Node 1.0/1.1 have neither, which
-- is what they mean. One statement, so it applies whole or not at all and a
-- re-run after a failure is safe. No index: a project-scoped list filters
-- on them, and an index build would lock the busy nodes table.

ALTER TABLE nodes
    ADD COLUMN owner VARCHAR(255),
    ADD COLUMN lessee VARCHAR(255);
