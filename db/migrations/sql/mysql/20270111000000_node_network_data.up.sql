-- Node 1.2 (release 0.3, API 1.66): network_data, the node's static
-- network configuration (OpenStack's network_data.json layout), a JSON
-- document as Ironic's nodes.network_data. Additive and nullable: rows
-- written at Node 1.0/1.1, or by a 0.2-pinned service, keep NULL, which
-- reads as {}. One statement, so it applies whole or not at all.

ALTER TABLE nodes ADD COLUMN network_data LONGTEXT;
