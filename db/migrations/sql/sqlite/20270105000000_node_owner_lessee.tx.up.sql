-- Node 1.2 (release 0.3, API 1.50 and 1.65): the project owning a node and
-- the project it is leased to, as Ironic's owner and lessee (VARCHAR(255)).
-- Additive and nullable. SQLite adds one column per ALTER TABLE; the file
-- runs in one transaction.

ALTER TABLE nodes ADD COLUMN owner VARCHAR(255);

--bun:split

ALTER TABLE nodes ADD COLUMN lessee VARCHAR(255);
