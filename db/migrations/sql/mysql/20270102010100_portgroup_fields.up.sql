-- Portgroup 1.1 (release 0.3; REST API 1.102, 1.103): a portgroup's
-- physical network and category. Additive and nullable; one statement, so
-- it applies whole or not at all.

ALTER TABLE portgroups
    ADD COLUMN physical_network VARCHAR(64),
    ADD COLUMN category VARCHAR(80);
