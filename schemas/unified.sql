-- SPDX-License-Identifier: MIT
-- unified.sql - the tables of tracebook's unified trace DB.
--
-- The tables follow the msprof unified DB (msprof_*.db, schema 1.2.0): same
-- table and column names, times as INTEGER nanoseconds, text attributes as
-- ids into STRING_IDS, so SQL written for msprof DBs runs here. tracebook adds
-- a rankId column to every row table (0 for a single rank) and a few columns
-- marked "tracebook" below; its own tables are prefixed TB_. Ids such as
-- globalTaskId and connectionId are indexed, never declared PRIMARY KEY:
-- real inputs repeat them. This file is embedded in the binary.

CREATE TABLE META_DATA (name TEXT, value TEXT);
CREATE TABLE STRING_IDS (id INTEGER, value TEXT);
-- one row per rank (tracebook): ranks may be on different clocks; baseTimeNs is
-- Kineto's baseTimeNanoseconds (Unix time of ts 0), NULL when times are Unix time
CREATE TABLE SESSION_TIME_INFO (startTimeNs INTEGER, endTimeNs INTEGER, baseTimeNs INTEGER, rankId INTEGER);
CREATE TABLE NPU_INFO (id INTEGER, name TEXT, rankId INTEGER);
CREATE TABLE RANK_DEVICE_MAP (rankId INTEGER, deviceId INTEGER);
CREATE TABLE HOST_INFO (hostUid TEXT, hostName TEXT, rankId INTEGER);

CREATE TABLE TASK (
    startNs INTEGER, endNs INTEGER, deviceId INTEGER, connectionId INTEGER,
    globalTaskId INTEGER, globalPid INTEGER, taskType INTEGER, contextId INTEGER,
    streamId INTEGER, taskId INTEGER, modelId INTEGER,
    rankId INTEGER, name INTEGER,         -- tracebook: rank; slice name (string id)
    argsShape INTEGER, argsValues BLOB,   -- tracebook: a timeline slice's args (docs/schema.md)
    fileOffset INTEGER,                   -- tracebook: a Kineto event's byte offset in its trace file (its order)
    tid INTEGER                           -- tracebook: a Kineto device slice's own tid when not its stream's
);
-- opType: the input's; for a trace (which gives none) taken from the kernel's
-- name (docs/inputs.md, "Kernel types")
CREATE TABLE COMPUTE_TASK_INFO (
    name INTEGER, globalTaskId INTEGER, blockNum INTEGER, mixBlockNum INTEGER,
    taskType INTEGER, opType INTEGER, inputFormats INTEGER, inputDataTypes INTEGER,
    inputShapes INTEGER, outputFormats INTEGER, outputDataTypes INTEGER,
    outputShapes INTEGER, attrInfo INTEGER, opState INTEGER, hf32Eligible INTEGER,
    gridDim INTEGER, blockDim INTEGER, rankId INTEGER,
    -- tracebook: older msprof DBs' name of mixBlockNum, so SQL written for them runs here
    mixBlockDim INTEGER GENERATED ALWAYS AS (mixBlockNum) VIRTUAL
);
CREATE TABLE COMMUNICATION_SCHEDULE_TASK_INFO (
    name INTEGER, globalTaskId INTEGER, taskType INTEGER, opType INTEGER, rankId INTEGER
);
CREATE TABLE COMMUNICATION_TASK_INFO (
    name INTEGER, globalTaskId INTEGER, taskType INTEGER, planeId INTEGER,
    groupName INTEGER, notifyId INTEGER, rdmaType INTEGER, srcRank INTEGER,
    dstRank INTEGER, transportType INTEGER, size INTEGER, dataType INTEGER,
    linkType INTEGER, opId INTEGER, isMaster INTEGER, bandwidth NUMERIC, rankId INTEGER
);
CREATE TABLE COMMUNICATION_OP (
    opName INTEGER, startNs INTEGER, endNs INTEGER, connectionId INTEGER,
    groupName INTEGER, opId INTEGER, relay INTEGER, retry INTEGER, dataType INTEGER,
    algType INTEGER, count NUMERIC, opType INTEGER, deviceId INTEGER, rankSize INTEGER,
    rankId INTEGER,
    argsShape INTEGER, argsValues BLOB    -- tracebook: a timeline slice's args (docs/schema.md)
);
CREATE TABLE CANN_API (
    startNs INTEGER, endNs INTEGER, type INTEGER, globalTid INTEGER,
    connectionId INTEGER, name INTEGER, rankId INTEGER,
    streamId INTEGER,                   -- tracebook: a trace call's args.stream (HTA's stream rule)
    argsShape INTEGER, argsValues BLOB, -- tracebook: a timeline slice's args (docs/schema.md)
    fileOffset INTEGER                  -- tracebook: a Kineto event's byte offset in its trace file (its order)
);
CREATE TABLE PYTORCH_API (
    startNs INTEGER, endNs INTEGER, globalTid INTEGER, connectionId INTEGER,
    name INTEGER, sequenceNumber INTEGER, fwdThreadId INTEGER, inputDtypes INTEGER,
    inputShapes INTEGER, callchainId INTEGER, type INTEGER, rankId INTEGER,
    streamId INTEGER,                   -- tracebook: a trace op's args.stream (HTA's stream rule)
    argsShape INTEGER, argsValues BLOB, -- tracebook: a timeline slice's args (docs/schema.md)
    fileOffset INTEGER                  -- tracebook: the event's byte offset in its trace file (its order)
);
CREATE TABLE CONNECTION_IDS (id INTEGER, connectionId INTEGER, rankId INTEGER);
CREATE TABLE PYTORCH_CALLCHAINS (id INTEGER, stack INTEGER, stackDepth INTEGER, rankId INTEGER);
CREATE TABLE STEP_TIME (id INTEGER, startNs INTEGER, endNs INTEGER, rankId INTEGER);
CREATE TABLE GC_RECORD (startNs INTEGER, endNs INTEGER, globalTid INTEGER, rankId INTEGER);
CREATE TABLE MEMCPY_INFO (globalTaskId INTEGER, size INTEGER, memcpyOperation INTEGER, rankId INTEGER);
CREATE TABLE OVERLAP_ANALYSIS (
    id INTEGER, deviceId INTEGER, startNs INTEGER, endNs INTEGER, type INTEGER, rankId INTEGER
);
CREATE TABLE MSTX_EVENTS (
    startNs INTEGER, endNs INTEGER, eventType INTEGER, rangeId INTEGER, category INTEGER,
    message INTEGER, globalTid INTEGER, endGlobalTid INTEGER, domainId INTEGER,
    connectionId INTEGER, rankId INTEGER,
    argsShape INTEGER, argsValues BLOB  -- tracebook: a timeline slice's args (docs/schema.md)
);
CREATE TABLE NPU_MEM (type INTEGER, ddr NUMERIC, hbm NUMERIC, timestampNs INTEGER, deviceId INTEGER, rankId INTEGER);
CREATE TABLE NPU_MODULE_MEM (moduleId INTEGER, timestampNs INTEGER, totalReserved NUMERIC, deviceId INTEGER, rankId INTEGER);
CREATE TABLE NPU_OP_MEM (
    operatorName INTEGER, addr INTEGER, type INTEGER, size INTEGER, timestampNs INTEGER,
    globalTid INTEGER, totalAllocate NUMERIC, totalReserve NUMERIC, component INTEGER,
    deviceId INTEGER, rankId INTEGER
);
CREATE TABLE MEMORY_RECORD (
    component INTEGER, timestamp INTEGER, totalAllocated INTEGER, totalReserved INTEGER,
    totalActive INTEGER, streamPtr INTEGER, deviceId INTEGER, rankId INTEGER
);
CREATE TABLE OP_MEMORY (
    name INTEGER, size INTEGER, allocationTime INTEGER, releaseTime INTEGER,
    activeReleaseTime INTEGER, duration INTEGER, activeDuration INTEGER,
    allocationTotalAllocated INTEGER, allocationTotalReserved INTEGER,
    allocationTotalActive INTEGER, releaseTotalAllocated INTEGER,
    releaseTotalReserved INTEGER, releaseTotalActive INTEGER, streamPtr INTEGER,
    deviceId INTEGER, rankId INTEGER
);
CREATE TABLE TASK_PMU_INFO (globalTaskId INTEGER, name INTEGER, value NUMERIC, rankId INTEGER);

-- msprof's device and host sample tables, filled only from DB inputs: msprof's
-- columns (string ids as msprof marks them) plus rankId
CREATE TABLE QOS (deviceId INTEGER, eventName INTEGER, bandwidth NUMERIC, timestampNs INTEGER, dieId INTEGER, rankId INTEGER);
CREATE TABLE AICORE_FREQ (deviceId INTEGER, timestampNs INTEGER, freq INTEGER, dieId INTEGER, rankId INTEGER);
CREATE TABLE ACC_PMU (accId INTEGER, readBwLevel INTEGER, writeBwLevel INTEGER, readOstLevel INTEGER, writeOstLevel INTEGER, timestampNs INTEGER, deviceId INTEGER, rankId INTEGER);
CREATE TABLE SOC_BANDWIDTH_LEVEL (l2BufferBwLevel INTEGER, mataBwLevel INTEGER, timestampNs INTEGER, deviceId INTEGER, rankId INTEGER);
CREATE TABLE NIC (deviceId INTEGER, timestampNs INTEGER, bandwidth INTEGER, rxPacketRate NUMERIC, rxByteRate NUMERIC, rxPackets INTEGER, rxBytes INTEGER, rxErrors INTEGER, rxDropped INTEGER, txPacketRate NUMERIC, txByteRate NUMERIC, txPackets INTEGER, txBytes INTEGER, txErrors INTEGER, txDropped INTEGER, funcId INTEGER, rankId INTEGER);
CREATE TABLE ROCE (deviceId INTEGER, timestampNs INTEGER, bandwidth INTEGER, rxPacketRate NUMERIC, rxByteRate NUMERIC, rxPackets INTEGER, rxBytes INTEGER, rxErrors INTEGER, rxDropped INTEGER, txPacketRate NUMERIC, txByteRate NUMERIC, txPackets INTEGER, txBytes INTEGER, txErrors INTEGER, txDropped INTEGER, funcId INTEGER, rankId INTEGER);
CREATE TABLE LLC (deviceId INTEGER, llcId INTEGER, timestampNs INTEGER, hitRate NUMERIC, throughput NUMERIC, mode INTEGER, rankId INTEGER);
CREATE TABLE SAMPLE_PMU_TIMELINE (deviceId INTEGER, timestampNs INTEGER, totalCycle INTEGER, usage NUMERIC, freq NUMERIC, coreId INTEGER, coreType INTEGER, rankId INTEGER);
CREATE TABLE SAMPLE_PMU_SUMMARY (deviceId INTEGER, metric INTEGER, value NUMERIC, coreId INTEGER, coreType INTEGER, rankId INTEGER);
CREATE TABLE HBM (deviceId INTEGER, timestampNs INTEGER, bandwidth NUMERIC, hbmId INTEGER, type INTEGER, rankId INTEGER);
CREATE TABLE DDR (deviceId INTEGER, timestampNs INTEGER, read NUMERIC, write NUMERIC, rankId INTEGER);
CREATE TABLE HCCS (deviceId INTEGER, timestampNs INTEGER, txThroughput NUMERIC, rxThroughput NUMERIC, rankId INTEGER);
CREATE TABLE UB (deviceId NUMERIC, portId NUMERIC, timestampNs NUMERIC, rxUdmaBind NUMERIC, txUdmaBind NUMERIC, rankId INTEGER);
CREATE TABLE SIO (deviceId NUMERIC, name INTEGER, timestampNs NUMERIC, rxReq NUMERIC, rxRsp NUMERIC, rxSnp NUMERIC, rxDat NUMERIC, txReq NUMERIC, txRsp NUMERIC, txSnp NUMERIC, txDat NUMERIC, rankId INTEGER);
CREATE TABLE CCU (deviceId NUMERIC, globalTaskId NUMERIC, name INTEGER, startNs NUMERIC, endNs NUMERIC, args INTEGER, rankId INTEGER);
CREATE TABLE DPU_TASK (dpuDeviceId NUMERIC, globalTid NUMERIC, startNs NUMERIC, endNs NUMERIC, globalTaskId NUMERIC, streamId NUMERIC, taskId NUMERIC, opName INTEGER, args INTEGER, rankId INTEGER);
CREATE TABLE PCIE (deviceId INTEGER, timestampNs INTEGER, txPostMin NUMERIC, txPostMax NUMERIC, txPostAvg NUMERIC, txNonpostMin NUMERIC, txNonpostMax NUMERIC, txNonpostAvg NUMERIC, txCplMin NUMERIC, txCplMax NUMERIC, txCplAvg NUMERIC, txNonpostLatencyMin NUMERIC, txNonpostLatencyMax NUMERIC, txNonpostLatencyAvg NUMERIC, rxPostMin NUMERIC, rxPostMax NUMERIC, rxPostAvg NUMERIC, rxNonpostMin NUMERIC, rxNonpostMax NUMERIC, rxNonpostAvg NUMERIC, rxCplMin NUMERIC, rxCplMax NUMERIC, rxCplAvg NUMERIC, rankId INTEGER);
CREATE TABLE CPU_USAGE (timestampNs NUMERIC, cpuId NUMERIC, usage NUMERIC, rankId INTEGER);
CREATE TABLE HOST_MEM_USAGE (timestampNs NUMERIC, usage NUMERIC, rankId INTEGER);
CREATE TABLE HOST_DISK_USAGE (timestampNs NUMERIC, readRate NUMERIC, writeRate NUMERIC, usage NUMERIC, rankId INTEGER);
CREATE TABLE HOST_NETWORK_USAGE (timestampNs NUMERIC, usage NUMERIC, speed NUMERIC, rankId INTEGER);
CREATE TABLE OSRT_API (name INTEGER, globalTid NUMERIC, startNs INTEGER, endNs INTEGER, rankId INTEGER);
CREATE TABLE NETDEV_STATS (deviceId INTEGER, timestampNs INTEGER, macTxPfcPkt INTEGER, macRxPfcPkt INTEGER, macTxByte INTEGER, macTxBandwidth NUMERIC, macRxByte INTEGER, macRxBandwidth NUMERIC, macTxBadByte INTEGER, macRxBadByte INTEGER, roceTxPkt INTEGER, roceRxPkt INTEGER, roceTxErrPkt INTEGER, roceRxErrPkt INTEGER, roceTxCnpPkt INTEGER, roceRxCnpPkt INTEGER, roceNewPktRty INTEGER, nicTxByte INTEGER, nicTxBandwidth NUMERIC, nicRxByte INTEGER, nicRxBandwidth NUMERIC, rankId INTEGER);

-- Enumerations (msprof values; tracebook's own ids are 60000 and up).
CREATE TABLE ENUM_API_TYPE (id INTEGER PRIMARY KEY, name TEXT);
INSERT INTO ENUM_API_TYPE VALUES
    (20000, 'acl'), (15000, 'model'), (10000, 'node'), (5500, 'communication'),
    (5000, 'runtime'), (50001, 'op'), (50002, 'queue'), (50003, 'trace'), (50004, 'mstx'),
    (60001, 'cuda_runtime'), (60002, 'cuda_driver'), (60003, 'user_annotation'),
    (60004, 'tops_runtime'), (60005, 'tops_cpu'), (60006, 'mtia_runtime');
CREATE TABLE ENUM_OVERLAP_ANALYSIS_TYPE (id INTEGER PRIMARY KEY, name TEXT);
INSERT INTO ENUM_OVERLAP_ANALYSIS_TYPE VALUES
    (0, 'COMPUTE'), (1, 'COMMUNICATION'), (2, 'COMM_NOT_OVERLAP_COMP'), (3, 'FREE');
CREATE TABLE ENUM_MEMCPY_OPERATION (id INTEGER PRIMARY KEY, name TEXT);
INSERT INTO ENUM_MEMCPY_OPERATION VALUES
    (0, 'host to host'), (1, 'host to device'), (2, 'device to host'), (3, 'device to device'),
    (4, 'managed memory'), (5, 'addr device to device'), (6, 'host to device ex'),
    (7, 'device to host ex'), (65535, 'other');
CREATE TABLE ENUM_MSTX_EVENT_TYPE (id INTEGER PRIMARY KEY, name TEXT);
INSERT INTO ENUM_MSTX_EVENT_TYPE VALUES (0, 'marker'), (1, 'push/pop'), (2, 'start/end'), (3, 'marker_ex');
CREATE TABLE ENUM_HCCL_DATA_TYPE (id INTEGER PRIMARY KEY, name TEXT);
INSERT INTO ENUM_HCCL_DATA_TYPE VALUES
    (0, 'INT8'), (1, 'INT16'), (2, 'INT32'), (3, 'FP16'), (4, 'FP32'), (5, 'INT64'),
    (6, 'UINT64'), (7, 'UINT8'), (8, 'UINT16'), (9, 'UINT32'), (10, 'FP64'), (11, 'BFP16'),
    (12, 'INT128'), (14, 'HIF8'), (15, 'FP8E4M3'), (16, 'FP8E5M2'), (17, 'FP8E8M0');
CREATE TABLE ENUM_HCCL_LINK_TYPE (id INTEGER PRIMARY KEY, name TEXT);
INSERT INTO ENUM_HCCL_LINK_TYPE VALUES
    (0, 'ON_CHIP'), (1, 'HCCS'), (2, 'PCIE'), (3, 'ROCE'), (4, 'SIO'), (5, 'HCCS_SW'),
    (6, 'STANDARD_ROCE'), (7, 'UB');
CREATE TABLE ENUM_HCCL_TRANSPORT_TYPE (id INTEGER PRIMARY KEY, name TEXT);
INSERT INTO ENUM_HCCL_TRANSPORT_TYPE VALUES (0, 'SDMA'), (1, 'RDMA'), (2, 'LOCAL'), (3, 'UB'), (4, 'ROCE');
CREATE TABLE ENUM_HCCL_RDMA_TYPE (id INTEGER PRIMARY KEY, name TEXT);
INSERT INTO ENUM_HCCL_RDMA_TYPE VALUES (0, 'RDMA_SEND_NOTIFY'), (1, 'RDMA_SEND_PAYLOAD');
CREATE TABLE ENUM_MODULE (id INTEGER PRIMARY KEY, name TEXT);
INSERT INTO ENUM_MODULE VALUES
    (0, 'SLOG'), (1, 'IDEDD'), (2, 'SCC'), (3, 'HCCL'), (4, 'FMK'), (5, 'CCU'), (6, 'DVPP'),
    (7, 'RUNTIME'), (8, 'CCE'), (9, 'HDC'), (10, 'DRV'), (11, 'NET'), (22, 'DEVMM'), (23, 'KERNEL'),
    (24, 'LIBMEDIA'), (25, 'CCECPU'), (27, 'ROS'), (28, 'HCCP'), (29, 'ROCE'), (30, 'TEFUSION'),
    (31, 'PROFILING'), (32, 'DP'), (33, 'APP'), (34, 'TS'), (35, 'TSDUMP'), (36, 'AICPU'), (37, 'LP'),
    (38, 'TDT'), (39, 'FE'), (40, 'MD'), (41, 'MB'), (42, 'ME'), (43, 'IMU'), (44, 'IMP'), (45, 'GE'),
    (47, 'CAMERA'), (48, 'ASCENDCL'), (49, 'TEEOS'), (50, 'ISP'), (51, 'SIS'), (52, 'HSM'), (53, 'DSS'),
    (54, 'PROCMGR'), (55, 'BBOX'), (56, 'AIVECTOR'), (57, 'TBE'), (58, 'FV'), (59, 'MDCMAP'), (60, 'TUNE'),
    (61, 'HSS'), (62, 'FFTS'), (63, 'OP'), (64, 'UDF'), (65, 'HICAID'), (66, 'TSYNC'), (67, 'AUDIO'),
    (68, 'TPRT'), (69, 'ASCENDCKERNEL'), (70, 'ASYS'), (71, 'ATRACE'), (72, 'RTC'), (73, 'SYSMONITOR'),
    (74, 'AMP'), (75, 'ADETECT'), (76, 'MBUFF'), (77, 'CUSTOM');

-- tracebook's own tables.
-- every file found: path as reached, and relative to the -dir it was found under
CREATE TABLE TB_SOURCE (
    id INTEGER, rankId INTEGER, path TEXT, kind TEXT, bytes INTEGER, mtimeNs INTEGER,
    rowsRead INTEGER, rowsSkipped INTEGER, note TEXT, input TEXT, relPath TEXT
);
CREATE TABLE TB_LOAD_COUNT (sourceId INTEGER, dest TEXT, events INTEGER);
CREATE TABLE TB_WARNING (sourceId INTEGER, message TEXT);
-- the rows of a DB input's ENUM_* tables as written (tableName the input's table name):
-- this DB's own ENUM_* tables are fixed, and an input's may hold other ids or names
CREATE TABLE TB_SOURCE_ENUM (rankId INTEGER, tableName TEXT, id INTEGER, name TEXT);
-- the rows of a profile DB's own META_DATA (torch_npu's profiler metadata: distributed_args,
-- pp_info, ...), of a profiler_metadata.json and a Kineto trace's distributedInfo, name and
-- value as written; a DB tracebook wrote keeps its TB_PROFILE_META
CREATE TABLE TB_PROFILE_META (rankId INTEGER, name TEXT, value TEXT);
-- a torch_npu summary CSV of a rank as the file held it, for `export summary` to write it
-- back: file is its name (a string id), line 0 its header line exactly as read (line end
-- included), every other row one record as loaded (fields CSV-encoded, no line end)
CREATE TABLE TB_SOURCE_CSV (rankId INTEGER, file INTEGER, line INTEGER, record TEXT);
CREATE TABLE TB_RANK (rankId INTEGER, hostName TEXT, source TEXT);
-- a Kineto trace's record_param_comms calls (what PyTorch says each collective
-- moves); the load names the collectives they launched from them
CREATE TABLE TB_COLLECTIVE (
    rankId INTEGER, globalTid INTEGER, startNs INTEGER, endNs INTEGER, collective INTEGER,
    dtype INTEGER, inNelems INTEGER, outNelems INTEGER, groupSize INTEGER, groupName INTEGER
);
-- the bandwidth a Kineto trace gives its memory copies and sets (args
-- "memory bandwidth (GB/s)"), by task
CREATE TABLE TB_MEMCPY_BW (globalTaskId INTEGER, bandwidth NUMERIC, rankId INTEGER);
CREATE TABLE TB_PROCESS (
    rankId INTEGER, pid, name TEXT, labels TEXT, sortIndex INTEGER, deviceId INTEGER, layer TEXT,
    unrouted INTEGER
);
CREATE TABLE TB_THREAD (rankId INTEGER, pid, tid, name TEXT, sortIndex INTEGER);
CREATE TABLE TB_FLOW (
    rankId INTEGER, cat INTEGER, name INTEGER, flowId TEXT, fromPid, fromTid, fromNs INTEGER,
    toPid, toTid, toNs INTEGER, connectionId INTEGER,
    written INTEGER     -- how the trace wrote it: 1 id a number, 2 start "bp":"e", 4 finish "bp":"e"
);
CREATE TABLE TB_EVENT (
    rankId INTEGER, pid, tid, ph TEXT, cat INTEGER, name INTEGER, startNs INTEGER,
    endNs INTEGER, args TEXT,
    fileOffset INTEGER, -- the event's byte offset in its trace file (its order)
    scope TEXT          -- an instant event's "s" as written (g, p, t); NULL when it had none
);
CREATE TABLE TB_COUNTER (
    rankId INTEGER, pid, name INTEGER, series INTEGER, timestampNs INTEGER, value NUMERIC
);
-- step trace time as the profiler computed it (step_trace_time.csv), in µs
CREATE TABLE TB_STEP_TRACE_TIME (
    rankId INTEGER, deviceId INTEGER, step TEXT, computing NUMERIC, communicationNotOverlapped NUMERIC,
    overlapped NUMERIC, communication NUMERIC, free NUMERIC, stage NUMERIC, bubble NUMERIC,
    communicationNotOverlappedExcludeReceive NUMERIC, preparing NUMERIC
);
-- topsprof statistics listings: one row per (class, device, name) as printed
CREATE TABLE TB_TOPS_SUMMARY (
    rankId INTEGER, class TEXT, deviceId INTEGER, pid INTEGER, timePct NUMERIC, timeNs INTEGER,
    calls INTEGER, avgNs INTEGER, minNs INTEGER, maxNs INTEGER, name INTEGER
);
-- topsprof section footers: Accumulate Time, Total Calls, Total Time
CREATE TABLE TB_TOPS_TOTAL (
    rankId INTEGER, class TEXT, deviceId INTEGER, pid INTEGER, fromTrace INTEGER,
    accumulateNs INTEGER, totalCalls INTEGER, totalNs INTEGER
);
CREATE TABLE TB_ITERATION (
    rankId INTEGER, deviceId INTEGER, modelId INTEGER, indexId INTEGER, iterId INTEGER,
    startNs INTEGER, endNs INTEGER,
    -- msprof's FP Start and BP End (times), Iteration Refresh and Data Aug Bound
    -- (durations); NULL where the step_trace CSV wrote N/A
    fpStartNs INTEGER, bpEndNs INTEGER, refreshNs INTEGER, dataAugNs INTEGER
);
-- PMU metrics of a summary CSV's kernels (op_summary, kernel_details: the columns after
-- Context ID) whose tasks a better source gave (a timeline, a DB), keyed by the kernel's
-- start and name: the load moves each onto the task it belongs to (TASK_PMU_INFO); what
-- matched no task stays here
CREATE TABLE TB_KERNEL_PMU (
    rankId INTEGER, deviceId INTEGER, startNs INTEGER, name INTEGER, metric INTEGER, value
);
-- The Type column of a summary CSV's kernels (kernel_details, op_summary) whose tasks a
-- better source gave (a timeline), keyed by the kernel's start and name: the load makes it
-- the opType of the task's COMPUTE_TASK_INFO, so a kernel's type is the CSV's, not the one a
-- timeline's name gave; what matched no task stays here
CREATE TABLE TB_KERNEL_TYPE (
    rankId INTEGER, deviceId INTEGER, startNs INTEGER, name INTEGER, opType INTEGER
);
-- the Reduce Start / Reduce Duration pairs of a graph iteration, idx from 0 in the CSV's order
CREATE TABLE TB_ITERATION_REDUCE (
    rankId INTEGER, deviceId INTEGER, modelId INTEGER, iterId INTEGER, idx INTEGER,
    startNs INTEGER, durNs INTEGER
);
-- Communication analysis of torch_npu (ASCEND_PROFILER_OUTPUT/communication.json,
-- communication_matrix.json) and msprof-analyze (cluster_communication.json,
-- cluster_communication_matrix.json). step is the file's key as written ("step2");
-- opKind 'collective' or 'p2p'; opName and groupName (string ids) are the two halves
-- of the "<op>@<group>" key; groupRanks is the rank set a cluster file keys the op
-- under ("0,1,2,3"), NULL for p2p and per-rank files; cluster is 1 for rows of a
-- cluster file, whose rankId is the rank the file names (NULL where it names none),
-- 0 for per-rank files. "Total Op Info" sums are not rows.
-- One row per op and rank; times in ns (exact from the ms/µs text), ratios as written.
CREATE TABLE TB_COMM_OP_STAT (
    rankId INTEGER, step TEXT, opKind TEXT, opName INTEGER, groupName INTEGER, startTimeNs INTEGER,
    elapseNs INTEGER, transitNs INTEGER, waitNs INTEGER, synchronizationNs INTEGER, idleNs INTEGER,
    waitRatio NUMERIC, synchronizationRatio NUMERIC, groupRanks TEXT, cluster INTEGER
);
-- one row per op, rank and transport (RDMA, HCCS, PCIE, SDMA, SIO, ...), as written
CREATE TABLE TB_COMM_BANDWIDTH (
    rankId INTEGER, step TEXT, opName INTEGER, transport TEXT, transitSizeMB NUMERIC, transitTimeMs NUMERIC,
    bandwidthGBs NUMERIC, largePacketRatio NUMERIC, opKind TEXT, groupName INTEGER, groupRanks TEXT,
    cluster INTEGER
);
-- the Size Distribution of each op and transport: packet size (MB, the key as written),
-- packets of that size and their transit time
CREATE TABLE TB_COMM_SIZE_DIST (
    rankId INTEGER, step TEXT, opKind TEXT, opName INTEGER, groupName INTEGER, transport TEXT,
    sizeMB TEXT, count INTEGER, timeMs NUMERIC, groupRanks TEXT, cluster INTEGER
);
-- one row per op and "src-dst" link of the communication matrix, as written
CREATE TABLE TB_COMM_MATRIX (
    rankId INTEGER, step TEXT, opKind TEXT, opName INTEGER, groupName INTEGER, srcRank INTEGER, dstRank INTEGER,
    transportType TEXT, transitSizeMB NUMERIC, transitTimeMs NUMERIC, bandwidthGBs NUMERIC, groupRanks TEXT,
    cluster INTEGER
);
-- communication groups: communication_group.json (kind 'collective' or 'p2p', groupIndex
-- its place in that list, names from comm_group_parallel_info when given; rankId NULL) and
-- profiler_metadata.json parallel_group_info (kind the process group's name, e.g. 'tp';
-- groupId its key; groupRank the rank's place in it; rankId the rank that wrote the file).
-- ranks as written, comma-separated; groupName is a string id (the "@<group>" of op keys).
CREATE TABLE TB_COMM_GROUP (
    kind TEXT, groupIndex INTEGER, ranks TEXT, groupName INTEGER, groupId TEXT, pgName TEXT,
    groupRank INTEGER, rankId INTEGER
);
-- msprof-analyze cluster_step_trace_time*.csv, as written (µs): type 'rank' rows give the
-- rank in indexText, type 'stage' rows the stage's rank tuple
CREATE TABLE TB_CLUSTER_STEP_TRACE_TIME (
    step TEXT, type TEXT, indexText TEXT, computing NUMERIC, communicationNotOverlapped NUMERIC,
    overlapped NUMERIC, communication NUMERIC, free NUMERIC, stage NUMERIC, bubble NUMERIC,
    communicationNotOverlappedExcludeReceive NUMERIC, preparing NUMERIC
);
-- npu_module_mem.csv: reserved memory per component (name as a string id; no module
-- enum is known for the text file)
CREATE TABLE TB_NPU_MODULE_MEM (
    rankId INTEGER, component INTEGER, timestampNs INTEGER, totalReservedBytes INTEGER, deviceId INTEGER
);
-- static_op_mem.csv: static graph memory per op (deviceId as written: a number or 'host')
CREATE TABLE TB_STATIC_OP_MEM (
    rankId INTEGER, deviceId TEXT, opName INTEGER, modelName INTEGER, graphId INTEGER,
    nodeIndexStart INTEGER, nodeIndexEnd INTEGER, sizeBytes INTEGER
);
-- operator_details.csv: host and device time per framework operator (ns)
CREATE TABLE TB_OPERATOR_DETAILS (
    rankId INTEGER, name INTEGER, inputShapes INTEGER, callStack TEXT, hostSelfNs INTEGER,
    hostTotalNs INTEGER, deviceSelfNs INTEGER, deviceTotalNs INTEGER, deviceSelfAicoreNs INTEGER,
    deviceTotalAicoreNs INTEGER
);

-- op_statistic.csv (msprof, torch_npu): per op type and core type; times in ns
CREATE TABLE TB_OP_STATISTIC (
    rankId INTEGER, deviceId INTEGER, opType INTEGER, coreType INTEGER, count INTEGER, totalNs INTEGER,
    minNs INTEGER, avgNs INTEGER, maxNs INTEGER, ratio NUMERIC
);
-- api_statistic.csv: per API level and name; times in ns, variance as written (µs²)
CREATE TABLE TB_API_STATISTIC (
    rankId INTEGER, deviceId INTEGER, level INTEGER, apiName INTEGER, timeNs INTEGER, count INTEGER,
    avgNs INTEGER, minNs INTEGER, maxNs INTEGER, variance NUMERIC
);
-- communication_statistic.csv: per communication op type; times in ns
CREATE TABLE TB_COMM_STATISTIC (
    rankId INTEGER, deviceId INTEGER, opType INTEGER, count INTEGER, totalNs INTEGER, minNs INTEGER,
    avgNs INTEGER, maxNs INTEGER, ratio NUMERIC
);
