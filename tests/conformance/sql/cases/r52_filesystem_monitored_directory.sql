-- A filesystem table over a directory with 'source.monitor-interval': Flink lists the
-- directory again every second and reads the files that appear, for ever (an unbounded
-- source), so the streaming job never ends: plans and graphs only.
CREATE TABLE clicks (
  user_name STRING,
  url STRING
) WITH (
  'connector' = 'filesystem',
  'path' = '${SQL_DATA}/clicks',
  'format' = 'json',
  'source.monitor-interval' = '1 s'
);
SELECT user_name, COUNT(*) AS n FROM clicks GROUP BY user_name;
