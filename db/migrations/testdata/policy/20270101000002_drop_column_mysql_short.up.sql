-- MySQL lets COLUMN be omitted.
ALTER TABLE nodes ADD INDEX nodes_name_idx (name), DROP `extra`;
