// SPDX-License-Identifier: MIT
//
// duckdb_read.js - the peer figure of tests/bench/bench.sh: DuckDB's
// read_json on the same trace file, typed columns and a group-by, through
// the npm package @duckdb/node-api (found through NODE_PATH; bench.sh skips
// this figure with a note when node or the package is missing). It is a
// figure printed beside tracebook's, not a test dependency.
//
// Every event is read with its common fields typed (name, ph, cat, pid,
// tid as text, ts and dur as doubles) and grouped by name and phase: the
// rows it returns are counted, so the whole file is parsed. An ascend
// trace is a top-level array; a Kineto trace an object whose traceEvents
// array is unnested.
//
// usage: node duckdb_read.js ascend|kineto FILE
// Prints "events N groups G" and exits 0, or a message and exit 1.
'use strict';

const { DuckDBInstance } = require('@duckdb/node-api');

const FIELDS = 'name VARCHAR, ph VARCHAR, cat VARCHAR, pid VARCHAR, tid VARCHAR, ts DOUBLE, dur DOUBLE';

function quote(s) {
    return "'" + s.replace(/'/g, "''") + "'";
}

function sql(kind, file) {
    const big = 'maximum_object_size = 4000000000';
    if (kind === 'ascend')
        return `SELECT name, ph, count(*) AS n, sum(dur) AS d FROM read_json(${quote(file)}, ` +
            `format = 'array', ${big}, columns = {name: 'VARCHAR', ph: 'VARCHAR', cat: 'VARCHAR', ` +
            `pid: 'VARCHAR', tid: 'VARCHAR', ts: 'DOUBLE', dur: 'DOUBLE'}) GROUP BY name, ph`;
    return `WITH e AS (SELECT unnest(traceEvents, recursive := true) FROM read_json(${quote(file)}, ` +
        `format = 'unstructured', ${big}, columns = {traceEvents: 'STRUCT(${FIELDS})[]'})) ` +
        'SELECT name, ph, count(*) AS n, sum(dur) AS d FROM e GROUP BY name, ph';
}

async function main(argv) {
    if (argv.length !== 2 || (argv[0] !== 'ascend' && argv[0] !== 'kineto')) {
        console.error('usage: node duckdb_read.js ascend|kineto FILE');
        return 1;
    }
    const db = await DuckDBInstance.create(':memory:');
    const conn = await db.connect();
    const reader = await conn.runAndReadAll(sql(argv[0], argv[1]));
    const rows = reader.getRows();
    let events = 0n;
    for (const r of rows)
        events += BigInt(r[2]);
    console.log(`events ${events} groups ${rows.length}`);
    return 0;
}

main(process.argv.slice(2)).then((rc) => process.exit(rc), (e) => {
    console.error('duckdb_read.js: error: ' + e.message);
    process.exit(1);
});
