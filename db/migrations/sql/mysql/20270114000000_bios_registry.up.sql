-- BIOSSetting 1.0, registry fields (release 0.3, API 1.74): what the bios
-- interface read of each setting from the hardware's attribute registry
-- (Ironic's bios_settings columns). Additive and nullable: rows cached
-- before hold NULL, shown as null (allowable_values as []). The kind is new
-- in release 0.3, so no older release reads these rows.
-- One statement, so it applies whole or not at all.

ALTER TABLE bios_settings
    ADD COLUMN attribute_type VARCHAR(255),
    ADD COLUMN allowable_values LONGTEXT,
    ADD COLUMN lower_bound BIGINT,
    ADD COLUMN max_length BIGINT,
    ADD COLUMN min_length BIGINT,
    ADD COLUMN read_only BOOLEAN,
    ADD COLUMN reset_required BOOLEAN,
    ADD COLUMN `unique` BOOLEAN,
    ADD COLUMN upper_bound BIGINT;
