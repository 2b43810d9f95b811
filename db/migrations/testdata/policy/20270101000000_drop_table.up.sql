-- Deliberately bad: drops a table older releases still read.
DROP TABLE chassis;
