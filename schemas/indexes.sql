-- SPDX-License-Identifier: MIT
-- indexes.sql - indexes created once loading is done (faster than during).
--
-- The set is what joins of the unified tables need: string ids, the id that
-- ties TASK to its *_INFO tables, msprof's own TASK(startNs, globalTaskId),
-- steps and communication ops by time. The indexes on string ids, on
-- globalTaskId and TASK's on startNs are in indexes_live.sql: made with the
-- tables and kept up as the rows go in, since their keys arrive in order (or
-- nearly). Time-range indexes on the
-- big host API tables (PYTORCH_API, CANN_API) are not built at load time: they
-- would cost more than a third of the load (docs/performance.md), and
-- msprof's own DB has none either.
CREATE INDEX COMMUNICATION_OP_start ON COMMUNICATION_OP(startNs);
CREATE INDEX STEP_TIME_id ON STEP_TIME(rankId, id);
