-- A GROUP BY over a csv table of four lines. Flink's batch planner asks the csv format for the
-- table's rows (the files' size over the size of their first lines: 4 here) and costs the
-- aggregate on them: over so few rows sorting is cheaper than hashing.
CREATE TABLE names (
  id INT,
  name STRING
) WITH (
  'connector' = 'filesystem',
  'path' = '${SQL_DATA}/names.csv',
  'format' = 'csv'
);
SELECT MOD(id, 2) AS parity, COUNT(*) AS n, MAX(id) AS top FROM names GROUP BY MOD(id, 2);
