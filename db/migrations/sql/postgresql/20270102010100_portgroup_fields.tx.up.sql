-- Portgroup 1.1 (release 0.3; REST API 1.102, 1.103): a portgroup's
-- physical network and category. Additive and nullable. The file runs in
-- one transaction.

ALTER TABLE portgroups ADD COLUMN physical_network VARCHAR(64);

--bun:split

ALTER TABLE portgroups ADD COLUMN category VARCHAR(80);
