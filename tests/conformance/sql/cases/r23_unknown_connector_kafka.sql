-- A connector whose factory is not on the classpath ('kafka' is not part of Flink's release jars).
CREATE TABLE kafka_src (
  id INT,
  name STRING
) WITH (
  'connector' = 'kafka',
  'topic' = 'orders',
  'properties.bootstrap.servers' = 'localhost:9092',
  'format' = 'json'
);
SELECT id, name FROM kafka_src;
