-- ORDER BY a non-time column with LIMIT: streaming, Flink's Top-N over all rows (SortLimit,
-- AppendFastStrategy, one subtask); batch, a local and a global SortLimit.
CREATE VIEW t AS SELECT * FROM (VALUES
  ('a', 5), ('b', 3), ('c', 7), ('d', 1), ('e', 9), ('f', 7), ('g', 2)
) AS x(k, v);
SELECT k, v FROM t ORDER BY v DESC LIMIT 3;
