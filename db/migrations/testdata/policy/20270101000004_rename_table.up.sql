RENAME TABLE chassis TO racks;
