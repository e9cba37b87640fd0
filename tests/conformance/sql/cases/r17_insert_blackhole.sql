-- INSERT INTO a blackhole sink: an updating aggregate into a sink that accepts every change.
CREATE VIEW source_table AS SELECT * FROM (VALUES (1), (2), (1), (3), (1), (2), (5)) AS t(num);
CREATE TABLE sink_table (num INT, cnt BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO sink_table SELECT num, COUNT(*) AS cnt FROM source_table GROUP BY num;
