-- Port 1.1 (release 0.3; REST API 1.34 to 1.101): a port's physical
-- network, Smart NIC flag, name (unique when set), description, vendor and
-- category (Portgroup 1.1 is the next migration). Additive and nullable:
-- rows written by release 0.2 keep NULL, which reads as the field's
-- default (is_smartnic false). The file runs in one transaction.

ALTER TABLE ports ADD COLUMN physical_network VARCHAR(64);

--bun:split

ALTER TABLE ports ADD COLUMN is_smartnic BOOLEAN;

--bun:split

ALTER TABLE ports ADD COLUMN name VARCHAR(255);

--bun:split

ALTER TABLE ports ADD COLUMN description VARCHAR(255);

--bun:split

ALTER TABLE ports ADD COLUMN vendor VARCHAR(32);

--bun:split

ALTER TABLE ports ADD COLUMN category VARCHAR(80);

--bun:split

CREATE UNIQUE INDEX uniq_ports0name ON ports (name);
