// SPDX-License-Identifier: MIT
//
// check.js - opens tracebook's HTML pages in chromium and reports what a
// reader sees, as JSON on stdout; tests/cli/html_test.py judges it.
//
//   node check.js CHROMIUM PAGES.json
//
// PAGES.json is a list of {"html": path, "shot": png path or null, "top": png
// path or null, "sections": a folder or null}. For each
// page: the console errors and page errors, every request other than the
// page itself (all of them are refused), any dialog (a script the data
// smuggled in would open one), the milliseconds until the load event, each
// section's title, its charts (the marks of each SVG, the points of each
// line, the legend's names, the ticks' and axes' labels) and its table (the
// header, every row's cells, data-rows and data-file), and what sorting
// each table's first numeric column did (ascending, then descending, as
// numbers). Screenshots, before any click: the whole page at "shot", the
// first screen at "top", each section as sections/section-<i>.png.
'use strict';

const fs = require('fs');
const path = require('path');
const { chromium } = require('playwright-core');

async function sortCheck(page, t) {
    // the first numeric column of table t, clicked twice
    const res = [];
    const col = await page.evaluate((t) => {
        const ths = document.querySelectorAll('table.data')[t].tHead.rows[0].cells;
        for (let i = 0; i < ths.length; i++) if (ths[i].classList.contains('n')) return i;
        return -1;
    }, t);
    if (col < 0) return null;
    const th = page.locator('table.data').nth(t).locator('thead th').nth(col);
    for (let k = 0; k < 2; k++) {
        await th.click();
        res.push(await page.evaluate(([t, col]) => {
            const tb = document.querySelectorAll('table.data')[t];
            return {
                sort: tb.tHead.rows[0].cells[col].getAttribute('aria-sort'),
                values: Array.from(tb.tBodies[0].rows, (r) => r.cells[col].textContent),
            };
        }, [t, col]));
    }
    return { column: col, clicks: res };
}

async function filterCheck(page, t) {
    const inp = page.locator('input.filter').nth(t);
    const first = await page.evaluate((t) => {
        const r = document.querySelectorAll('table.data')[t].tBodies[0].rows[0];
        return r ? r.cells[0].textContent : null;
    }, t);
    if (first === null || first === '') return null;
    await inp.fill(first);
    const shown = await page.evaluate((t) => Array.from(document.querySelectorAll('table.data')[t].tBodies[0].rows)
        .filter((r) => !r.hidden).map((r) => r.cells[0].textContent), t);
    await inp.fill('');
    return { query: first, shown };
}

async function checkPage(browser, spec) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const url = 'file://' + path.resolve(spec.html);
    const out = { html: spec.html, console: [], errors: [], requests: [], dialogs: [] };
    page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') out.console.push(m.text()); });
    page.on('pageerror', (e) => out.errors.push(String(e)));
    page.on('dialog', (d) => { out.dialogs.push(d.message()); d.dismiss(); });
    await context.route('**/*', (route) => {
        const u = route.request().url();
        if (u === url) return route.continue();
        out.requests.push(u);
        return route.abort();
    });
    const t0 = Date.now();
    await page.goto(url, { waitUntil: 'load' });
    out.load_ms = Date.now() - t0;
    out.title = await page.title();
    out.sections = await page.evaluate(() => Array.from(document.querySelectorAll('section.report'), (s) => {
        const tb = s.querySelector('table.data');
        return {
            title: s.querySelector('h2').textContent,
            charts: Array.from(s.querySelectorAll('svg.chart'), (svg) => ({
                marks: svg.querySelectorAll('.mark').length,
                ticks: svg.querySelectorAll('.tick').length,
                titles: Array.from(svg.querySelectorAll('.mark > title'), (x) => x.textContent),
                classes: Array.from(svg.querySelectorAll('.mark'), (x) => x.getAttribute('class')),
                fills: Array.from(svg.querySelectorAll('.mark'), (x) => getComputedStyle(x).fill),
                legend: svg.querySelectorAll('.legend text').length,
                legend_names: Array.from(svg.querySelectorAll('.legend text'), (x) => x.textContent),
                lines: Array.from(svg.querySelectorAll('polyline'),
                                  (p) => p.getAttribute('points').split(' ').filter((x) => x).length),
                tick_labels: Array.from(svg.querySelectorAll('.tick'), (x) => x.textContent),
                axis_labels: Array.from(svg.querySelectorAll('text.label'), (x) => x.textContent),
                verdicts: Array.from(svg.querySelectorAll('.verdict'), (v) => v.getAttribute('class') + ': ' +
                                     v.querySelector('title').textContent),
                width: svg.getBoundingClientRect().width,
            })),
            table: tb && {
                header: Array.from(tb.tHead.rows[0].cells, (c) => c.textContent),
                numeric: Array.from(tb.tHead.rows[0].cells, (c) => c.classList.contains('n')),
                rows: Array.from(tb.tBodies[0].rows, (r) => Array.from(r.cells, (c) => c.textContent)),
                align: Array.from(tb.tBodies[0].rows[0] ? tb.tBodies[0].rows[0].cells : [],
                                  (c) => getComputedStyle(c).textAlign),
                data_rows: Number(tb.getAttribute('data-rows')),
                data_file: tb.getAttribute('data-file'),
            },
            cut: s.querySelector('p.cut') ? s.querySelector('p.cut').textContent : null,
        };
    }));
    out.scripts = await page.evaluate(() => document.querySelectorAll('script').length);
    out.warnings = await page.evaluate(() => Array.from(document.querySelectorAll('.warnings li'), (l) => l.textContent));
    if (spec.shot) await page.screenshot({ path: spec.shot, fullPage: true });
    if (spec.top) await page.screenshot({ path: spec.top });
    if (spec.sections) {
        const n = await page.locator('section.report').count();
        for (let i = 0; i < n; i++)
            await page.locator('section.report').nth(i).screenshot({ path: path.join(spec.sections, 'section-' + i + '.png') });
    }
    out.sorts = [];
    out.filters = [];
    for (let t = 0; t < out.sections.length; t++) {
        if (!out.sections[t].table) continue;
        out.sorts.push(await sortCheck(page, t));
        out.filters.push(await filterCheck(page, t));
    }
    await context.close();
    return out;
}

async function main() {
    const [exe, list] = process.argv.slice(2);
    const pages = JSON.parse(fs.readFileSync(list, 'utf8'));
    const browser = await chromium.launch({ executablePath: exe, args: ['--no-sandbox'] });
    const results = [];
    try {
        for (const p of pages) results.push(await checkPage(browser, p));
    } finally {
        await browser.close();
    }
    process.stdout.write(JSON.stringify(results));
}

main().catch((e) => { process.stderr.write(String(e && e.stack || e) + '\n'); process.exit(1); });
