-- Which subtask a key's rows go to: the key group of Flink's BinaryRowData hash of the key
-- fields, seen in the print sink's subtask prefixes. Keys of a string (inline up to 7 bytes,
-- longer ones in the row's variable part) and a BIGINT, one of them NULL.
CREATE VIEW t AS SELECT * FROM (VALUES
  ('a', 1), ('bb', 2), ('longer key', 3), ('exactly', 4), ('exactly8', 5), ('another longer key here', 6),
  ('a', 7), ('zz', 8), ('bb', 2), (CAST(NULL AS STRING), 9), ('q', -3), ('longer key', 3)
) AS x(k, v);
CREATE TABLE print_sink (k STRING, big BIGINT, n BIGINT) WITH ('connector' = 'print');
INSERT INTO print_sink SELECT k, big, COUNT(*) AS n FROM (SELECT k, CAST(v AS BIGINT) * 1000000000 AS big FROM t) GROUP BY k, big;
