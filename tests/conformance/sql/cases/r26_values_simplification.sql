-- VALUES rows with expressions (a union of one-row projections) and what Calcite's RexSimplify
-- folds once the outer projection is pushed into each row: NULLs through arithmetic and TRIM,
-- comparisons of literals of one type, CASE (simple and searched), AND of literals, casts of
-- literals, x * 1; MOD, UPPER and other constant calls stay unfolded.
SELECT
  a + b AS s,
  CASE WHEN b IS NULL THEN -1 WHEN a > 1 THEN a ELSE 0 END AS c,
  CASE a WHEN 5 THEN 'five' ELSE 'other' END AS named,
  a > 1 AND b > 1 AS both_big,
  CAST(a AS BIGINT) * 2 AS big,
  CAST(a AS STRING) || s AS cat,
  UPPER(TRIM(s)) AS up,
  CAST(s AS VARCHAR(1)) AS first_char,
  a * 1 AS same,
  MOD(a, 3) AS md,
  COALESCE(p, 0) * 2 AS q,
  p < 2 AS small
FROM (VALUES
  (5, CAST(NULL AS INT), 'xy', CAST(1.25 AS DECIMAL(6, 2))),
  (CAST(NULL AS INT), 8, ' x', CAST(NULL AS DECIMAL(6, 2))),
  (0, 3, CAST(NULL AS STRING), CAST(7.5 AS DECIMAL(6, 2)))
) AS v(a, b, s, p);
