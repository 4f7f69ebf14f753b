/* SPDX-License-Identifier: MIT */
/*
 * rows.c - the column lists importers fill, one per destination table.
 * The DB stage builds its INSERT statements from these, so an importer and
 * the loader can never disagree on column order. Each list also names the
 * columns that hold STRING_IDS ids, which code moving rows between loads
 * must translate (row_roles).
 */
#include "db/rows.h"

#include <stdio.h>
#include <string.h>

const row_table_def row_tables[R_TABLE_COUNT] = {
    [R_TASK] = {"TASK", "startNs,endNs,deviceId,connectionId,globalTaskId,globalPid,taskType,"
                        "contextId,streamId,taskId,modelId,rankId,name,argsShape,argsValues,fileOffset,tid", 17,
                "taskType,name,argsShape"},
    [R_COMPUTE_TASK_INFO] = {"COMPUTE_TASK_INFO", "name,globalTaskId,taskType,opType,blockNum,"
                                                  "mixBlockNum,inputShapes,rankId", 8,
                                                  "name,taskType,opType,inputShapes"},
    [R_COMMUNICATION_OP] = {"COMMUNICATION_OP", "opName,startNs,endNs,connectionId,groupName,opId,"
                                                "dataType,algType,count,opType,deviceId,rankId,argsShape,argsValues", 14,
                                                "opName,groupName,algType,opType,argsShape"},
    [R_COMMUNICATION_TASK_INFO] = {"COMMUNICATION_TASK_INFO",
                                   "name,globalTaskId,taskType,planeId,groupName,notifyId,srcRank,"
                                   "dstRank,transportType,size,dataType,linkType,bandwidth,rankId", 14,
                                   "name,taskType,groupName"},
    [R_MEMCPY_INFO] = {"MEMCPY_INFO", "globalTaskId,size,memcpyOperation,rankId", 4, ""},
    [R_CANN_API] = {"CANN_API", "startNs,endNs,type,globalTid,connectionId,name,rankId,streamId,"
                                "argsShape,argsValues,fileOffset", 11, "name,argsShape"},
    [R_PYTORCH_API] = {"PYTORCH_API", "startNs,endNs,globalTid,connectionId,name,sequenceNumber,"
                                      "fwdThreadId,inputDtypes,inputShapes,type,rankId,streamId,argsShape,argsValues,"
                                      "fileOffset", 15,
                                      "name,inputDtypes,inputShapes,argsShape"},
    [R_STEP_TIME] = {"STEP_TIME", "id,startNs,endNs,rankId", 4, ""},
    [R_OVERLAP_ANALYSIS] = {"OVERLAP_ANALYSIS", "id,deviceId,startNs,endNs,type,rankId", 6, ""},
    [R_MSTX_EVENTS] = {"MSTX_EVENTS", "startNs,endNs,eventType,message,globalTid,connectionId,rankId,"
                                      "argsShape,argsValues", 9, "message,argsShape"},
    [R_FLOW] = {"TB_FLOW", "rankId,cat,name,flowId,fromPid,fromTid,fromNs,toPid,toTid,toNs,connectionId,written", 12,
                           "cat,name"},
    [R_FLOW_END] = {"TB_FLOW_END", "rankId,ph,cat,name,flowId,pid,tid,ts,seq,written", 10, "cat,name"},
    [R_COUNTER] = {"TB_COUNTER", "rankId,pid,name,series,timestampNs,value", 6, "name,series"},
    [R_EVENT] = {"TB_EVENT", "rankId,pid,tid,ph,cat,name,startNs,endNs,args,fileOffset,scope", 11, "cat,name"},
    [R_PROCESS] = {"TB_PROCESS", "rankId,pid,name,labels,sortIndex,deviceId,layer,unrouted", 8, ""},
    [R_THREAD] = {"TB_THREAD", "rankId,pid,tid,name,sortIndex", 5, ""},
    [R_CONNECTION_IDS] = {"CONNECTION_IDS", "id,connectionId,rankId", 3, ""},
    [R_RANK_DEVICE_MAP] = {"RANK_DEVICE_MAP", "rankId,deviceId", 2, ""},
    [R_NPU_INFO] = {"NPU_INFO", "id,name,rankId", 3, ""},
    [R_GC_RECORD] = {"GC_RECORD", "startNs,endNs,globalTid,rankId", 4, ""},
    [R_FULL_COMPUTE_TASK_INFO] = {"COMPUTE_TASK_INFO",
                                  "name,globalTaskId,blockNum,mixBlockNum,taskType,opType,inputFormats,"
                                  "inputDataTypes,inputShapes,outputFormats,outputDataTypes,outputShapes,attrInfo,"
                                  "opState,hf32Eligible,gridDim,blockDim,rankId", 18,
                                  "name,taskType,opType,inputFormats,inputDataTypes,inputShapes,outputFormats,"
                                  "outputDataTypes,outputShapes,attrInfo,opState,hf32Eligible"},
    [R_FULL_COMMUNICATION_OP] = {"COMMUNICATION_OP", "opName,startNs,endNs,connectionId,groupName,opId,relay,retry,"
                                                     "dataType,algType,count,opType,deviceId,rankSize,rankId,"
                                                     "argsShape,argsValues", 17,
                                                     "opName,groupName,algType,opType,argsShape"},
    [R_FULL_COMMUNICATION_TASK_INFO] = {"COMMUNICATION_TASK_INFO",
                                        "name,globalTaskId,taskType,planeId,groupName,notifyId,rdmaType,srcRank,"
                                        "dstRank,transportType,size,dataType,linkType,opId,isMaster,bandwidth,rankId",
                                        17, "name,taskType,groupName"},
    [R_FULL_PYTORCH_API] = {"PYTORCH_API", "startNs,endNs,globalTid,connectionId,name,sequenceNumber,fwdThreadId,"
                                           "inputDtypes,inputShapes,callchainId,type,rankId,streamId,argsShape,"
                                           "argsValues,fileOffset", 16,
                                           "name,inputDtypes,inputShapes,argsShape"},
    [R_FULL_MSTX_EVENTS] = {"MSTX_EVENTS", "startNs,endNs,eventType,rangeId,category,message,globalTid,endGlobalTid,"
                                           "domainId,connectionId,rankId,argsShape,argsValues", 13,
                                           "message,argsShape"},
    [R_COMMUNICATION_SCHEDULE_TASK_INFO] = {"COMMUNICATION_SCHEDULE_TASK_INFO",
                                            "name,globalTaskId,taskType,opType,rankId", 5, "name,taskType,opType"},
    [R_NPU_MEM] = {"NPU_MEM", "type,ddr,hbm,timestampNs,deviceId,rankId", 6, "type"},
    [R_NPU_MODULE_MEM] = {"NPU_MODULE_MEM", "moduleId,timestampNs,totalReserved,deviceId,rankId", 5, ""},
    [R_NPU_OP_MEM] = {"NPU_OP_MEM", "operatorName,addr,type,size,timestampNs,globalTid,totalAllocate,totalReserve,"
                                    "component,deviceId,rankId", 11, "operatorName,component"},
    [R_MEMORY_RECORD] = {"MEMORY_RECORD", "component,timestamp,totalAllocated,totalReserved,totalActive,streamPtr,"
                                          "deviceId,rankId", 8, "component"},
    [R_OP_MEMORY] = {"OP_MEMORY", "name,size,allocationTime,releaseTime,activeReleaseTime,duration,activeDuration,"
                                  "allocationTotalAllocated,allocationTotalReserved,allocationTotalActive,"
                                  "releaseTotalAllocated,releaseTotalReserved,releaseTotalActive,streamPtr,deviceId,"
                                  "rankId", 16, "name"},
    [R_PYTORCH_CALLCHAINS] = {"PYTORCH_CALLCHAINS", "id,stack,stackDepth,rankId", 4, "stack"},
    [R_TASK_PMU_INFO] = {"TASK_PMU_INFO", "globalTaskId,name,value,rankId", 4, "name"},
    [R_HOST_INFO] = {"HOST_INFO", "hostUid,hostName,rankId", 3, ""},
    [R_TOPS_SUMMARY] = {"TB_TOPS_SUMMARY", "rankId,class,deviceId,pid,timePct,timeNs,calls,avgNs,minNs,maxNs,name",
                        11, "name"},
    [R_STEP_TRACE_TIME] = {"TB_STEP_TRACE_TIME",
                           "rankId,deviceId,step,computing,communicationNotOverlapped,overlapped,communication,free,"
                           "stage,bubble,communicationNotOverlappedExcludeReceive,preparing", 12, ""},
    [R_TOPS_TOTAL] = {"TB_TOPS_TOTAL", "rankId,class,deviceId,pid,fromTrace,accumulateNs,totalCalls,totalNs", 8, ""},
    [R_COMM_OP_STAT] = {"TB_COMM_OP_STAT",
                        "rankId,step,opKind,opName,groupName,startTimeNs,elapseNs,transitNs,waitNs,"
                        "synchronizationNs,idleNs,waitRatio,synchronizationRatio,groupRanks,cluster", 15,
                        "opName,groupName"},
    [R_COMM_BANDWIDTH] = {"TB_COMM_BANDWIDTH",
                          "rankId,step,opName,transport,transitSizeMB,transitTimeMs,bandwidthGBs,largePacketRatio,"
                          "opKind,groupName,groupRanks,cluster", 12, "opName,groupName"},
    [R_COMM_SIZE_DIST] = {"TB_COMM_SIZE_DIST",
                          "rankId,step,opKind,opName,groupName,transport,sizeMB,count,timeMs,groupRanks,cluster", 11,
                          "opName,groupName"},
    [R_COMM_MATRIX] = {"TB_COMM_MATRIX",
                       "rankId,step,opKind,opName,groupName,srcRank,dstRank,transportType,transitSizeMB,"
                       "transitTimeMs,bandwidthGBs,groupRanks,cluster", 13, "opName,groupName"},
    [R_COMM_GROUP] = {"TB_COMM_GROUP", "kind,groupIndex,ranks,groupName,groupId,pgName,groupRank,rankId", 8,
                                       "groupName"},
    [R_CLUSTER_STEP_TRACE_TIME] = {"TB_CLUSTER_STEP_TRACE_TIME",
                                   "step,type,indexText,computing,communicationNotOverlapped,overlapped,"
                                   "communication,free,stage,bubble,communicationNotOverlappedExcludeReceive,"
                                   "preparing", 12, ""},
    [R_COLLECTIVE] = {"TB_COLLECTIVE", "rankId,globalTid,startNs,endNs,collective,dtype,inNelems,outNelems,"
                                       "groupSize,groupName", 10, "collective,dtype,groupName"},
    [R_MEMCPY_BW] = {"TB_MEMCPY_BW", "globalTaskId,bandwidth,rankId", 3, ""},
    [R_TB_NPU_MODULE_MEM] = {"TB_NPU_MODULE_MEM", "rankId,component,timestampNs,totalReservedBytes,deviceId", 5,
                                                  "component"},
    [R_STATIC_OP_MEM] = {"TB_STATIC_OP_MEM",
                         "rankId,deviceId,opName,modelName,graphId,nodeIndexStart,nodeIndexEnd,sizeBytes", 8,
                         "opName,modelName"},
    [R_OPERATOR_DETAILS] = {"TB_OPERATOR_DETAILS",
                            "rankId,name,inputShapes,callStack,hostSelfNs,hostTotalNs,deviceSelfNs,deviceTotalNs,"
                            "deviceSelfAicoreNs,deviceTotalAicoreNs", 10, "name,inputShapes"},
    [R_ITERATION] = {"TB_ITERATION",
                     "rankId,deviceId,modelId,indexId,iterId,startNs,endNs,fpStartNs,bpEndNs,refreshNs,dataAugNs", 11,
                     ""},
    [R_ITERATION_REDUCE] = {"TB_ITERATION_REDUCE", "rankId,deviceId,modelId,iterId,idx,startNs,durNs", 7, ""},
    [R_KERNEL_PMU] = {"TB_KERNEL_PMU", "rankId,deviceId,startNs,name,metric,value", 6, "name,metric"},
    [R_KERNEL_TYPE] = {"TB_KERNEL_TYPE", "rankId,deviceId,startNs,name,opType", 5, "name,opType"},
    [R_OP_STATISTIC] = {"TB_OP_STATISTIC",
                        "rankId,deviceId,opType,coreType,count,totalNs,minNs,avgNs,maxNs,ratio", 10,
                        "opType,coreType"},
    [R_API_STATISTIC] = {"TB_API_STATISTIC", "rankId,deviceId,level,apiName,timeNs,count,avgNs,minNs,maxNs,variance",
                         10, "level,apiName"},
    [R_COMM_STATISTIC] = {"TB_COMM_STATISTIC", "rankId,deviceId,opType,count,totalNs,minNs,avgNs,maxNs,ratio", 9,
                                               "opType"},
    [R_SOURCE_ENUM] = {"TB_SOURCE_ENUM", "rankId,tableName,id,name", 4, ""},
    [R_PROFILE_META] = {"TB_PROFILE_META", "rankId,name,value", 3, ""},
    [R_SOURCE_CSV] = {"TB_SOURCE_CSV", "rankId,file,line,record", 4, "file"},
    [R_QOS] = {"QOS", "deviceId,eventName,bandwidth,timestampNs,dieId,rankId", 6, "eventName"},
    [R_AICORE_FREQ] = {"AICORE_FREQ", "deviceId,timestampNs,freq,dieId,rankId", 5, ""},
    [R_ACC_PMU] = {"ACC_PMU",
        "accId,readBwLevel,writeBwLevel,readOstLevel,writeOstLevel,timestampNs,deviceId,rankId", 8, ""},
    [R_SOC_BANDWIDTH_LEVEL] = {"SOC_BANDWIDTH_LEVEL",
        "l2BufferBwLevel,mataBwLevel,timestampNs,deviceId,rankId", 5, ""},
    [R_NIC] = {"NIC",
        "deviceId,timestampNs,bandwidth,rxPacketRate,rxByteRate,rxPackets,rxBytes,rxErrors,"
        "rxDropped,txPacketRate,txByteRate,txPackets,txBytes,txErrors,txDropped,funcId,rankId", 17, ""},
    [R_ROCE] = {"ROCE",
        "deviceId,timestampNs,bandwidth,rxPacketRate,rxByteRate,rxPackets,rxBytes,rxErrors,"
        "rxDropped,txPacketRate,txByteRate,txPackets,txBytes,txErrors,txDropped,funcId,rankId", 17, ""},
    [R_LLC] = {"LLC", "deviceId,llcId,timestampNs,hitRate,throughput,mode,rankId", 7, "mode"},
    [R_SAMPLE_PMU_TIMELINE] = {"SAMPLE_PMU_TIMELINE",
        "deviceId,timestampNs,totalCycle,usage,freq,coreId,coreType,rankId", 8, "coreType"},
    [R_SAMPLE_PMU_SUMMARY] = {"SAMPLE_PMU_SUMMARY",
        "deviceId,metric,value,coreId,coreType,rankId", 6, "metric,coreType"},
    [R_HBM] = {"HBM", "deviceId,timestampNs,bandwidth,hbmId,type,rankId", 6, "type"},
    [R_DDR] = {"DDR", "deviceId,timestampNs,read,write,rankId", 5, ""},
    [R_HCCS] = {"HCCS", "deviceId,timestampNs,txThroughput,rxThroughput,rankId", 5, ""},
    [R_UB] = {"UB", "deviceId,portId,timestampNs,rxUdmaBind,txUdmaBind,rankId", 6, ""},
    [R_SIO] = {"SIO", "deviceId,name,timestampNs,rxReq,rxRsp,rxSnp,rxDat,txReq,txRsp,txSnp,txDat,rankId", 12, "name"},
    [R_CCU] = {"CCU", "deviceId,globalTaskId,name,startNs,endNs,args,rankId", 7, "name,args"},
    [R_DPU_TASK] = {"DPU_TASK",
        "dpuDeviceId,globalTid,startNs,endNs,globalTaskId,streamId,taskId,opName,args,rankId", 10, "opName,args"},
    [R_PCIE] = {"PCIE",
        "deviceId,timestampNs,txPostMin,txPostMax,txPostAvg,txNonpostMin,txNonpostMax,"
        "txNonpostAvg,txCplMin,txCplMax,txCplAvg,txNonpostLatencyMin,txNonpostLatencyMax,"
        "txNonpostLatencyAvg,rxPostMin,rxPostMax,rxPostAvg,rxNonpostMin,rxNonpostMax,"
        "rxNonpostAvg,rxCplMin,rxCplMax,rxCplAvg,rankId", 24, ""},
    [R_CPU_USAGE] = {"CPU_USAGE", "timestampNs,cpuId,usage,rankId", 4, ""},
    [R_HOST_MEM_USAGE] = {"HOST_MEM_USAGE", "timestampNs,usage,rankId", 3, ""},
    [R_HOST_DISK_USAGE] = {"HOST_DISK_USAGE", "timestampNs,readRate,writeRate,usage,rankId", 5, ""},
    [R_HOST_NETWORK_USAGE] = {"HOST_NETWORK_USAGE", "timestampNs,usage,speed,rankId", 4, ""},
    [R_OSRT_API] = {"OSRT_API", "name,globalTid,startNs,endNs,rankId", 5, "name"},
    [R_NETDEV_STATS] = {"NETDEV_STATS",
        "deviceId,timestampNs,macTxPfcPkt,macRxPfcPkt,macTxByte,macTxBandwidth,macRxByte,"
        "macRxBandwidth,macTxBadByte,macRxBadByte,roceTxPkt,roceRxPkt,roceTxErrPkt,roceRxErrPkt,"
        "roceTxCnpPkt,roceRxCnpPkt,roceNewPktRty,nicTxByte,nicTxBandwidth,nicRxByte,"
        "nicRxBandwidth,rankId", 22, ""},
};

/* 1 when the comma-separated list holds name. */
static int in_list(const char *list, const char *name, size_t n)
{
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0)
            return 1;
        if (!e)
            break;
        p = e + 1;
    }
    return 0;
}

int row_is_string(int table, const char *name)
{
    return in_list(row_tables[table].strings, name, strlen(name));
}

void row_roles(int table, unsigned char *roles)
{
    const char *p = row_tables[table].columns;
    for (int i = 0; i < row_tables[table].ncols; i++) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        roles[i] = COL_PLAIN;
        if (in_list(row_tables[table].strings, p, n))
            roles[i] = COL_STRING;
        else if (n == 12 && !strncmp(p, "globalTaskId", n))
            roles[i] = COL_TASK_ID;
        else if (n == 4 && !strncmp(p, "opId", n))
            roles[i] = COL_OP_ID;
        else if (table == R_OVERLAP_ANALYSIS && n == 2 && !strncmp(p, "id", n))
            roles[i] = COL_OVERLAP_ID;
        else if (table == R_FLOW_END && n == 3 && !strncmp(p, "seq", n))
            roles[i] = COL_FLOW_SEQ;
        p = e ? e + 1 : p + n;
    }
}

tb_status row_sink_fail(const row_sink *s, const char *path, tb_error *err)
{
    const tb_error *e = s->error ? s->error(s->ctx) : NULL;
    if (e && e->code != TB_OK) {
        if (e != err)
            *err = *e;
    } else {
        tb_error_set(err, TB_ERR_DB, "the DB writer failed");
    }
    if (path && err->file[0] == 0)
        snprintf(err->file, sizeof err->file, "%s", path);
    return err->code;
}
