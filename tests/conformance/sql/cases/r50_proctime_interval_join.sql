-- Processing-time interval join (ProcTimeIntervalJoin): rows join the other side's rows that
-- arrived within an hour of them by processing time; two bounded inputs that end within
-- seconds, so every matching pair joins.
CREATE VIEW orders AS SELECT id, PROCTIME() AS pt FROM (VALUES (1), (2), (3), (4)) AS o(id);
CREATE VIEW shipments AS SELECT sid, oid, PROCTIME() AS pt FROM (VALUES
  (10, 1), (20, 2), (21, 2), (50, 5)
) AS s(sid, oid);
SELECT o.id, s.sid
FROM orders AS o JOIN shipments AS s
ON o.id = s.oid AND s.pt BETWEEN o.pt - INTERVAL '1' HOUR AND o.pt + INTERVAL '1' HOUR;
