-- SPDX-License-Identifier: MIT
-- indexes_live.sql - indexes created with the tables, before the first row,
-- and kept up as the rows go in.
--
-- Their keys are ids the loader hands out in increasing order (string ids,
-- globalTaskId), so each insert adds an entry at the right end of the index:
-- about as cheap as the sort that builds the index at the end, and done on
-- the writer thread while the importer still parses, instead of after the
-- last event on the thread that waits for it (docs/performance.md). A
-- trace's tasks come nearly in start order (a device-heavy trace: 4% of them
-- start before the one written before them), so TASK_start's entries land
-- near the right end too. The other indexes are built once the rows are in
-- (indexes.sql).
CREATE UNIQUE INDEX STRING_IDS_id ON STRING_IDS(id);
CREATE INDEX TASK_gtid ON TASK(globalTaskId);
CREATE INDEX TASK_start ON TASK(startNs, globalTaskId);
CREATE INDEX COMPUTE_TASK_INFO_gtid ON COMPUTE_TASK_INFO(globalTaskId);
CREATE INDEX COMMUNICATION_TASK_INFO_gtid ON COMMUNICATION_TASK_INFO(globalTaskId);
CREATE INDEX MEMCPY_INFO_gtid ON MEMCPY_INFO(globalTaskId);
CREATE INDEX TASK_PMU_INFO_gtid ON TASK_PMU_INFO(globalTaskId);
