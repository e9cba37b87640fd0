-- Scalar semantics over a CSV table (no constant folding): integer division and remainders of
-- negatives, INT overflow, DOUBLE to STRING, DECIMAL rounding, division and scale, LIKE, CONCAT
-- and COALESCE with NULLs, CHAR padding, three-valued AND/OR/NOT, CASE without ELSE.
CREATE TABLE nums (
  id INT,
  a INT,
  b INT,
  d DOUBLE,
  p DECIMAL(6, 2),
  s STRING,
  flag BOOLEAN
) WITH (
  'connector' = 'filesystem',
  'path' = '${SQL_DATA}/numbers.csv',
  'format' = 'csv',
  'csv.null-literal' = 'null'
);
SELECT
  id,
  a / b AS q,
  a % b AS r,
  MOD(a, b) AS m,
  a + 1 AS inc,
  CAST(d AS STRING) AS ds,
  d * 2 AS d2,
  CAST(p AS DECIMAL(4, 1)) AS p1,
  p * 3 AS p3,
  p / 7 AS p7,
  CAST(a AS DOUBLE) / 4 AS ad,
  s LIKE 'a%' AS lk,
  CONCAT(s, '-', CAST(id AS STRING)) AS c,
  COALESCE(s, 'none') AS cs,
  CAST(s AS CHAR(4)) AS ch,
  CHAR_LENGTH(s) AS len,
  flag OR a > 0 AS o,
  flag AND a > 0 AS n,
  NOT flag AS nf,
  CASE WHEN d > 1 THEN 'big' WHEN d < 0 THEN 'neg' END AS cls
FROM nums;
