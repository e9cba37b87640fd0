-- The s02 query explained three times in ONE session (EXPLAIN, EXPLAIN JSON_EXECUTION_PLAN,
-- EXPLAIN): explain_session shows the id counters going on from one statement to the next.
CREATE VIEW source_table AS SELECT * FROM (VALUES (1), (2), (1), (3), (1), (2), (5)) AS t(num);
SELECT num, count(*) AS cnt FROM source_table GROUP BY num;
