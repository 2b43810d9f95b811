-- Good: everything here is additive. Words in comments do not count:
-- DROP TABLE nodes; ALTER TABLE nodes RENAME TO x;
/* ALTER TABLE nodes MODIFY name TEXT; */
ALTER TABLE nodes ADD COLUMN shard VARCHAR(255);

--bun:split

ALTER TABLE nodes ADD COLUMN retired BOOLEAN NOT NULL DEFAULT FALSE, ADD COLUMN rename_count INTEGER;

--bun:split

ALTER TABLE nodes ADD CONSTRAINT uniq_nodes0shard UNIQUE (shard), DROP CONSTRAINT old_check, ALTER COLUMN shard DROP DEFAULT;

--bun:split

CREATE TABLE node_history (
    id BIGINT NOT NULL PRIMARY KEY,
    "rename" VARCHAR(255) NOT NULL,
    note TEXT DEFAULT 'DROP TABLE; RENAME; NOT NULL'
);

--bun:split

CREATE INDEX nodes_shard_idx ON nodes (shard);

--bun:split

ALTER INDEX nodes_shard_idx RENAME TO nodes_shard_idx2;

--bun:split

DROP INDEX nodes_shard_idx2;

--bun:split

UPDATE nodes SET shard = 'a' WHERE shard IS NULL;
