-- SPDX-License-Identifier: MIT
-- indexes.sql - indexes created once loading is done (faster than during).
--
-- The set is what joins of the unified tables need: string ids, the id that
-- ties TASK to its *_INFO tables, msprof's own TASK(startNs, globalTaskId),
-- steps and communication ops by time. Time-range indexes on the big host API
-- tables (PYTORCH_API, CANN_API) are not built at load time: they would cost
-- more than a third of the load (docs/performance.md), and msprof's own DB
-- has none either.
CREATE UNIQUE INDEX STRING_IDS_id ON STRING_IDS(id);
CREATE INDEX TASK_start ON TASK(startNs, globalTaskId);
CREATE INDEX TASK_gtid ON TASK(globalTaskId);
CREATE INDEX COMPUTE_TASK_INFO_gtid ON COMPUTE_TASK_INFO(globalTaskId);
CREATE INDEX COMMUNICATION_TASK_INFO_gtid ON COMMUNICATION_TASK_INFO(globalTaskId);
CREATE INDEX MEMCPY_INFO_gtid ON MEMCPY_INFO(globalTaskId);
CREATE INDEX TASK_PMU_INFO_gtid ON TASK_PMU_INFO(globalTaskId);
CREATE INDEX COMMUNICATION_OP_start ON COMMUNICATION_OP(startNs);
CREATE INDEX STEP_TIME_id ON STEP_TIME(rankId, id);
