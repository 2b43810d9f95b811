-- Release 0.3: inspection rules (API 1.96, InspectionRule 1.0). A new
-- table only: additive. A rule's conditions and actions are JSON lists in
-- its row, read and written with it.
-- MySQL commits each DDL statement: CREATE TABLE IF NOT EXISTS with its
-- index inline, so a re-run after a failure is safe. `sensitive` is a
-- reserved word in MySQL and MariaDB, hence quoted.

CREATE TABLE IF NOT EXISTS inspection_rules (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    uuid VARCHAR(36) NOT NULL,
    priority INTEGER NOT NULL DEFAULT 0,
    description VARCHAR(255),
    `sensitive` BOOLEAN,
    phase VARCHAR(16),
    conditions LONGTEXT,
    actions LONGTEXT,
    created_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    updated_at DATETIME(6),
    version VARCHAR(15),
    CONSTRAINT uniq_inspection_rules0uuid UNIQUE (uuid),
    INDEX inspection_rule_phase_idx (phase)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
