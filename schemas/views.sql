-- SPDX-License-Identifier: MIT
-- views.sql - views with names resolved, for report authors.
--
-- Plain SQL only (no tracebook functions), so the sqlite3 shell reads them.
-- dur is in nanoseconds everywhere. A window (--model-id/--iteration-id)
-- is applied by TEMP views of the same names at report time.

-- taskType is the accelerator core of COMPUTE_TASK_INFO (AI_CORE, AI_VECTOR_CORE, ...),
-- else TASK's: an msprof DB's TASK.taskType may hold the launching API's name instead
CREATE VIEW kernel AS
SELECT t.rankId AS rankId, t.deviceId AS deviceId, t.streamId AS streamId,
       t.globalTaskId AS globalTaskId, t.connectionId AS connectionId,
       n.value AS name, o.value AS opType, coalesce(ct.value, tt.value) AS taskType,
       t.startNs AS startNs, t.endNs AS endNs, t.endNs - t.startNs AS dur
FROM TASK t
JOIN COMPUTE_TASK_INFO c ON c.globalTaskId = t.globalTaskId
LEFT JOIN STRING_IDS n ON n.id = c.name
LEFT JOIN STRING_IDS o ON o.id = c.opType
LEFT JOIN STRING_IDS ct ON ct.id = c.taskType
LEFT JOIN STRING_IDS tt ON tt.id = t.taskType;

CREATE VIEW device_task AS
SELECT t.rankId AS rankId, t.deviceId AS deviceId, t.streamId AS streamId,
       t.globalTaskId AS globalTaskId, t.connectionId AS connectionId,
       -- msprof DBs name their tasks only in the *_TASK_INFO tables
       coalesce(n.value, cn.value,
                (SELECT s.value FROM COMMUNICATION_TASK_INFO ct JOIN STRING_IDS s ON s.id = ct.name
                 WHERE ct.globalTaskId = t.globalTaskId ORDER BY ct.rowid LIMIT 1)) AS name,
       coalesce(cty.value, tt.value) AS taskType,
       CASE WHEN c.globalTaskId IS NOT NULL THEN 'compute'
            WHEN m.globalTaskId IS NOT NULL THEN 'memory'
            WHEN EXISTS (SELECT 1 FROM COMMUNICATION_TASK_INFO ct WHERE ct.globalTaskId = t.globalTaskId)
                 THEN 'communication'
            ELSE 'other' END AS class,
       t.startNs AS startNs, t.endNs AS endNs, t.endNs - t.startNs AS dur
FROM TASK t
LEFT JOIN COMPUTE_TASK_INFO c ON c.globalTaskId = t.globalTaskId
LEFT JOIN MEMCPY_INFO m ON m.globalTaskId = t.globalTaskId
LEFT JOIN STRING_IDS n ON n.id = t.name
LEFT JOIN STRING_IDS cn ON cn.id = c.name
LEFT JOIN STRING_IDS cty ON cty.id = c.taskType
LEFT JOIN STRING_IDS tt ON tt.id = t.taskType;

CREATE VIEW comm_op AS
SELECT o.rankId AS rankId, o.deviceId AS deviceId, o.opId AS opId,
       n.value AS name, ot.value AS opType, g.value AS groupName,
       o.startNs AS startNs, o.endNs AS endNs, o.endNs - o.startNs AS dur,
       o.connectionId AS connectionId
FROM COMMUNICATION_OP o
LEFT JOIN STRING_IDS n ON n.id = o.opName
LEFT JOIN STRING_IDS ot ON ot.id = o.opType
LEFT JOIN STRING_IDS g ON g.id = o.groupName;

CREATE VIEW api AS
SELECT a.rankId AS rankId, 'CANN' AS source, e.name AS type, n.value AS name,
       a.globalTid AS globalTid, a.startNs AS startNs, a.endNs AS endNs,
       a.endNs - a.startNs AS dur, a.connectionId AS connectionId
FROM CANN_API a
LEFT JOIN STRING_IDS n ON n.id = a.name
LEFT JOIN ENUM_API_TYPE e ON e.id = a.type
UNION ALL
SELECT p.rankId, 'PYTORCH', e.name, n.value, p.globalTid, p.startNs, p.endNs,
       p.endNs - p.startNs, p.connectionId
FROM PYTORCH_API p
LEFT JOIN STRING_IDS n ON n.id = p.name
LEFT JOIN ENUM_API_TYPE e ON e.id = p.type;

-- Every step, with cut = 1 for a step the profile cut short: the first or
-- the last step of its rank (of 3 or more) that took less than half the
-- rank's median step (the lower median). `step` leaves those out, so per-step
-- reports and their means see complete steps only.
CREATE VIEW step_all AS
WITH s AS (
  SELECT rankId, id, startNs, endNs, endNs - startNs AS dur,
         row_number() OVER (PARTITION BY rankId ORDER BY startNs, id) AS k,
         count(*) OVER (PARTITION BY rankId) AS n
  FROM STEP_TIME),
d AS (
  SELECT rankId, endNs - startNs AS dur,
         row_number() OVER (PARTITION BY rankId ORDER BY endNs - startNs) AS r,
         count(*) OVER (PARTITION BY rankId) AS c
  FROM STEP_TIME WHERE startNs IS NOT NULL AND endNs IS NOT NULL),
m AS (SELECT rankId, dur AS median FROM d WHERE r = (c + 1) / 2)
SELECT s.rankId AS rankId, s.id AS id, s.startNs AS startNs, s.endNs AS endNs, s.dur AS dur,
       CASE WHEN s.n >= 3 AND (s.k = 1 OR s.k = s.n) AND 2 * s.dur < m.median THEN 1 ELSE 0 END AS cut
FROM s LEFT JOIN m ON m.rankId IS s.rankId;

CREATE VIEW step AS
SELECT rankId, id, startNs, endNs, dur FROM step_all WHERE cut = 0;

CREATE VIEW memcpy AS
SELECT t.rankId AS rankId, t.deviceId AS deviceId, t.streamId AS streamId,
       t.globalTaskId AS globalTaskId, n.value AS name, m.size AS size,
       e.name AS operation, t.startNs AS startNs, t.endNs AS endNs,
       t.endNs - t.startNs AS dur
FROM MEMCPY_INFO m
JOIN TASK t ON t.globalTaskId = m.globalTaskId
LEFT JOIN STRING_IDS n ON n.id = t.name
LEFT JOIN ENUM_MEMCPY_OPERATION e ON e.id = m.memcpyOperation;

CREATE VIEW overlap AS
SELECT o.rankId AS rankId, o.deviceId AS deviceId, e.name AS type,
       o.startNs AS startNs, o.endNs AS endNs, o.endNs - o.startNs AS dur
FROM OVERLAP_ANALYSIS o
LEFT JOIN ENUM_OVERLAP_ANALYSIS_TYPE e ON e.id = o.type;

CREATE VIEW event AS
SELECT e.rankId AS rankId, e.pid AS pid, e.tid AS tid, e.ph AS ph,
       c.value AS cat, n.value AS name, e.startNs AS startNs, e.endNs AS endNs,
       e.endNs - e.startNs AS dur, e.args AS args
FROM TB_EVENT e
LEFT JOIN STRING_IDS c ON c.id = e.cat
LEFT JOIN STRING_IDS n ON n.id = e.name;

-- TB_FLOW.name is NULL when the name is the category followed by the id
-- (HostToDevice<id>): the view rebuilds it.
CREATE VIEW flow AS
SELECT f.rankId AS rankId, c.value AS cat, coalesce(n.value, c.value || f.flowId) AS name, f.flowId AS flowId,
       f.fromPid AS fromPid, f.fromTid AS fromTid, f.fromNs AS fromNs,
       f.toPid AS toPid, f.toTid AS toTid, f.toNs AS toNs, f.connectionId AS connectionId
FROM TB_FLOW f
LEFT JOIN STRING_IDS c ON c.id = f.cat
LEFT JOIN STRING_IDS n ON n.id = f.name;

CREATE VIEW counter AS
SELECT c.rankId AS rankId, c.pid AS pid, n.value AS name, s.value AS series,
       c.timestampNs AS timestampNs, c.value AS value
FROM TB_COUNTER c
LEFT JOIN STRING_IDS n ON n.id = c.name
LEFT JOIN STRING_IDS s ON s.id = c.series;

-- Reserved memory per component over time: a summary CSV's rows (npu_module_mem.csv,
-- TB_NPU_MODULE_MEM), else an msprof DB's NPU_MODULE_MEM with its module ids named by
-- that DB's own ENUM_MODULE (TB_SOURCE_ENUM), else by this DB's.
CREATE VIEW module_mem AS
SELECT m.rankId AS rankId, m.deviceId AS deviceId, c.value AS component, m.timestampNs AS timestampNs,
       m.totalReservedBytes AS totalReserved
FROM TB_NPU_MODULE_MEM m
LEFT JOIN STRING_IDS c ON c.id = m.component
UNION ALL
SELECT n.rankId, n.deviceId,
       CASE WHEN EXISTS (SELECT 1 FROM TB_SOURCE_ENUM e WHERE e.rankId IS n.rankId AND e.tableName = 'ENUM_MODULE')
            THEN (SELECT e.name FROM TB_SOURCE_ENUM e
                  WHERE e.rankId IS n.rankId AND e.tableName = 'ENUM_MODULE' AND e.id = n.moduleId)
            ELSE (SELECT e.name FROM ENUM_MODULE e WHERE e.id = n.moduleId) END,
       n.timestampNs, n.totalReserved
FROM NPU_MODULE_MEM n
WHERE NOT EXISTS (SELECT 1 FROM TB_NPU_MODULE_MEM t WHERE t.rankId IS n.rankId);

-- msprof's sample-based PMU metrics per core (SAMPLE_PMU_SUMMARY, an msprof DB) of the
-- AI Cores (core type AIC) and of the AI Vector Cores (AIV), metric named; rows without
-- a value left out.
CREATE VIEW aic_sample_metric AS
SELECT p.rankId AS rankId, p.deviceId AS deviceId, p.coreId AS coreId, s.value AS metric, p.value AS value
FROM SAMPLE_PMU_SUMMARY p
JOIN STRING_IDS s ON s.id = p.metric
JOIN STRING_IDS t ON t.id = p.coreType
WHERE t.value = 'AIC' AND p.value IS NOT NULL;

CREATE VIEW aiv_sample_metric AS
SELECT p.rankId AS rankId, p.deviceId AS deviceId, p.coreId AS coreId, s.value AS metric, p.value AS value
FROM SAMPLE_PMU_SUMMARY p
JOIN STRING_IDS s ON s.id = p.metric
JOIN STRING_IDS t ON t.id = p.coreType
WHERE t.value = 'AIV' AND p.value IS NOT NULL;
