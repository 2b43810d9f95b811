-- Port 1.1 (release 0.3; REST API 1.34 to 1.101): a port's physical
-- network, Smart NIC flag, name (unique when set), description, vendor and
-- category (Portgroup 1.1 is the next migration). Additive and nullable:
-- rows written by release 0.2 keep NULL, which reads as the field's
-- default (is_smartnic false). One statement, so it applies whole or not
-- at all (MySQL 8 has no ADD COLUMN IF NOT EXISTS); InnoDB adds nullable
-- columns in place.

ALTER TABLE ports
    ADD COLUMN physical_network VARCHAR(64),
    ADD COLUMN is_smartnic BOOLEAN,
    ADD COLUMN name VARCHAR(255),
    ADD COLUMN description VARCHAR(255),
    ADD COLUMN vendor VARCHAR(32),
    ADD COLUMN category VARCHAR(80),
    ADD CONSTRAINT uniq_ports0name UNIQUE (name);
