-- r30 (LEFT JOIN with an updating aggregate on the right, one subtask) with a state TTL
-- (table.exec.state.ttl = 1 d): the join keeps both sides with a TTL.
SET 'parallelism.default' = '1';
SET 'table.exec.state.ttl' = '1 d';
CREATE VIEW orders AS SELECT * FROM (VALUES
  (1, 10, 100), (2, 20, 250), (3, 10, 75), (4, 30, 30), (5, 40, 990), (6, 20, 5)
) AS o(order_id, cust_id, amount);
CREATE VIEW visits AS SELECT * FROM (VALUES
  (10, 'a'), (20, 'b'), (10, 'c'), (50, 'd'), (10, 'e')
) AS c(cust_id, page);
SELECT o.order_id, v.cust_id, v.n FROM orders AS o
LEFT JOIN (SELECT cust_id, COUNT(*) AS n FROM visits GROUP BY cust_id) AS v ON o.cust_id = v.cust_id;
