-- A FILTER (WHERE ...) whose condition is not boolean: Flink's validator refuses the query.
CREATE TABLE events (
  id INT,
  k STRING,
  v INT
) WITH (
  'connector' = 'filesystem',
  'path' = '${SQL_DATA}/events.csv',
  'format' = 'csv'
);
SELECT k, COUNT(*) FILTER (WHERE v + 1) AS n FROM events GROUP BY k;
