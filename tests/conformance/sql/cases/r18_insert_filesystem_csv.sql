-- INSERT INTO a filesystem sink in csv format. ${SQL_OUT} is an empty directory for the run;
-- sink_files records the files written there and their lines.
CREATE TABLE orders (
  id INT,
  k AS CONCAT('k', CAST(id % 3 AS STRING)),
  v AS id * 10
) WITH (
  'connector' = 'datagen',
  'number-of-rows' = '10',
  'fields.id.kind' = 'sequence',
  'fields.id.start' = '1',
  'fields.id.end' = '10'
);
CREATE TABLE csv_sink (id INT, k STRING, v INT) WITH (
  'connector' = 'filesystem',
  'path' = '${SQL_OUT}/csv_sink',
  'format' = 'csv'
);
INSERT INTO csv_sink SELECT id, k, v FROM orders WHERE id % 2 = 1;
