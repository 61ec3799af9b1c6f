-- An incident's row is updated soon after it is written (its opening page sent, acknowledged,
-- resolved), and a page's is claimed before it is sent. With every heap page filled by the
-- inserts, such an update lands on another page and writes an entry in each of the table's
-- indexes (eight on incidents); with room left on the page, an update that changes no indexed
-- column stays on it and writes none (a heap-only tuple).
ALTER TABLE incidents SET (fillfactor = 80);
ALTER TABLE pages SET (fillfactor = 80);
