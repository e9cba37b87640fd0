-- Processing-time interval LEFT JOIN: a row without a match is NULL-padded only when its
-- cleanup timer fires (an hour of processing time after it); the bounded inputs end first, and
-- Flink does not fire processing-time timers at the end of input, so no padded row is emitted.
CREATE VIEW orders AS SELECT id, PROCTIME() AS pt FROM (VALUES (1), (2), (3), (4)) AS o(id);
CREATE VIEW shipments AS SELECT sid, oid, PROCTIME() AS pt FROM (VALUES
  (10, 1), (20, 2), (21, 2), (50, 5)
) AS s(sid, oid);
SELECT o.id, s.sid
FROM orders AS o LEFT JOIN shipments AS s
ON o.id = s.oid AND s.pt BETWEEN o.pt - INTERVAL '1' HOUR AND o.pt + INTERVAL '1' HOUR;
