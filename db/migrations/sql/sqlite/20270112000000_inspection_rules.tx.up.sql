-- Release 0.3: inspection rules (API 1.96, InspectionRule 1.0). A new
-- table only: additive. A rule's conditions and actions are JSON lists in
-- its row, read and written with it.

CREATE TABLE inspection_rules (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    uuid VARCHAR(36) NOT NULL,
    priority INTEGER NOT NULL DEFAULT 0,
    description VARCHAR(255),
    sensitive BOOLEAN,
    phase VARCHAR(16),
    conditions TEXT,
    actions TEXT,
    created_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
    updated_at TIMESTAMP,
    version VARCHAR(15),
    CONSTRAINT uniq_inspection_rules0uuid UNIQUE (uuid)
);

--bun:split

CREATE INDEX inspection_rule_phase_idx ON inspection_rules (phase);
