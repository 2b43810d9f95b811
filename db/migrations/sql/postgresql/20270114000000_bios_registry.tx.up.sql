-- BIOSSetting 1.0, registry fields (release 0.3, API 1.74): what the bios
-- interface read of each setting from the hardware's attribute registry
-- (Ironic's bios_settings columns). Additive and nullable: rows cached
-- before hold NULL, shown as null (allowable_values as []). The kind is new
-- in release 0.3, so no older release reads these rows.

ALTER TABLE bios_settings ADD COLUMN attribute_type VARCHAR(255);

--bun:split

ALTER TABLE bios_settings ADD COLUMN allowable_values TEXT;

--bun:split

ALTER TABLE bios_settings ADD COLUMN lower_bound BIGINT;

--bun:split

ALTER TABLE bios_settings ADD COLUMN max_length BIGINT;

--bun:split

ALTER TABLE bios_settings ADD COLUMN min_length BIGINT;

--bun:split

ALTER TABLE bios_settings ADD COLUMN read_only BOOLEAN;

--bun:split

ALTER TABLE bios_settings ADD COLUMN reset_required BOOLEAN;

--bun:split

ALTER TABLE bios_settings ADD COLUMN "unique" BOOLEAN;

--bun:split

ALTER TABLE bios_settings ADD COLUMN upper_bound BIGINT;
