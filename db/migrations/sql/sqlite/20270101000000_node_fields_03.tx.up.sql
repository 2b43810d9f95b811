-- Node 1.2 (release 0.3, API 1.33-1.109): the node fields that need no
-- other table: the storage, rescue, bios and firmware interfaces, fault,
-- deploy_step, automated_clean, protected(_reason), description,
-- retired(_reason), shard, parent_node, disable_power_off, instance_name
-- and health. Additive and nullable: rows written at Node 1.1 keep NULL,
-- which reads as each field's default (false, {} or null), so no online
-- migration is needed; an interface left NULL is the hardware type's
-- default, as the 1.1 interfaces are.
-- SQLite adds one column per ALTER TABLE; the file runs in one transaction.

ALTER TABLE nodes ADD COLUMN storage_interface VARCHAR(255);

--bun:split

ALTER TABLE nodes ADD COLUMN rescue_interface VARCHAR(255);

--bun:split

ALTER TABLE nodes ADD COLUMN bios_interface VARCHAR(255);

--bun:split

ALTER TABLE nodes ADD COLUMN firmware_interface VARCHAR(255);

--bun:split

ALTER TABLE nodes ADD COLUMN fault VARCHAR(255);

--bun:split

ALTER TABLE nodes ADD COLUMN deploy_step TEXT;

--bun:split

ALTER TABLE nodes ADD COLUMN automated_clean BOOLEAN;

--bun:split

ALTER TABLE nodes ADD COLUMN protected BOOLEAN;

--bun:split

ALTER TABLE nodes ADD COLUMN protected_reason TEXT;

--bun:split

ALTER TABLE nodes ADD COLUMN description TEXT;

--bun:split

ALTER TABLE nodes ADD COLUMN retired BOOLEAN;

--bun:split

ALTER TABLE nodes ADD COLUMN retired_reason TEXT;

--bun:split

ALTER TABLE nodes ADD COLUMN shard VARCHAR(255);

--bun:split

ALTER TABLE nodes ADD COLUMN parent_node VARCHAR(36);

--bun:split

ALTER TABLE nodes ADD COLUMN disable_power_off BOOLEAN;

--bun:split

ALTER TABLE nodes ADD COLUMN instance_name VARCHAR(255);

--bun:split

ALTER TABLE nodes ADD COLUMN health VARCHAR(255);
