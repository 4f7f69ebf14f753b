#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# schema_test.py - schemas/report-spec.schema.json describes the language the
# loader reads: every built-in report file, every sample spec and every
# working example of docs/spec.md validates against it, and specs the loader
# refuses are refused by the schema too (and by the loader, checked with
# the command). Needs python3-jsonschema and python3-yaml (scripts/setup).
#
# usage: schema_test.py TRACEBOOK SOURCE_ROOT WORK_DIR
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tbtest  # noqa: E402

import jsonschema
import yaml

BAD = [
    ("unknown top-level key", {"tracebook": 1, "report": []}),
    ("unknown report key", {"tracebook": 1, "reports": [{"id": "a", "sql": "SELECT 1", "titel": "x"}]}),
    ("bad output format", {"tracebook": 1, "outputs": ["pdf"]}),
    ("bad policy", {"tracebook": 1, "metrics": {"step_trace": {"policy": "fast"}}}),
    ("negative limit", {"tracebook": 1, "reports": [{"id": "a", "sql": "SELECT 1", "limit": -1}]}),
    ("bad id", {"tracebook": 1, "reports": [{"id": "a b", "sql": "SELECT 1"}]}),
    ("sheet name with /", {"tracebook": 1, "reports": [{"id": "a", "sql": "SELECT 1", "xlsx": {"sheet": "a/b"}}]}),
    ("version 2", {"tracebook": 2}),
    ("pie with two values", {"tracebook": 1, "reports": [{"id": "a", "sql": "SELECT 1", "xlsx": {
        "chart": {"type": "pie", "values": ["a", "b"]}}}]}),
    ("unknown chart type", {"tracebook": 1, "reports": [{"id": "a", "sql": "SELECT 1", "xlsx": {
        "chart": {"type": "area", "values": "a"}}}]}),
    ("threshold without op", {"tracebook": 1, "reports": [{"id": "a", "sql": "SELECT 1", "xlsx": {
        "conditional": [{"column": "a", "type": "threshold", "value": 1}]}}]}),
    ("top with a value", {"tracebook": 1, "reports": [{"id": "a", "sql": "SELECT 1", "xlsx": {
        "conditional": [{"column": "a", "type": "top", "top": 3, "value": 1}]}}]}),
    ("data bar with top", {"tracebook": 1, "reports": [{"id": "a", "sql": "SELECT 1", "xlsx": {
        "conditional": [{"column": "a", "type": "data_bar", "top": 3}]}}]}),
    ("conditional not a list", {"tracebook": 1, "reports": [{"id": "a", "sql": "SELECT 1", "xlsx": {
        "conditional": {"column": "a", "type": "data_bar"}}}]}),
    ("workbook file with /", {"tracebook": 1, "workbook": {"file": "a/b.xlsx"}}),
    ("series_by on a bar chart", {"tracebook": 1, "reports": [{"id": "a", "sql": "SELECT 1 AS x, 2 AS y", "xlsx": {
        "chart": {"type": "bar", "categories": "x", "values": "y", "series_by": "x"}}}]}),
    ("series_by without categories", {"tracebook": 1, "reports": [{"id": "a", "sql": "SELECT 1 AS x, 2 AS y",
                                      "xlsx": {"chart": {"type": "line", "values": "y", "series_by": "x"}}}]}),
]


def main():
    exe, root, work = (os.path.abspath(a) for a in tbtest.args("TRACEBOOK SOURCE_ROOT WORK_DIR", 3, 3))
    os.makedirs(work, exist_ok=True)
    schema = json.load(open(os.path.join(root, "schemas", "report-spec.schema.json")))
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    T = tbtest.Checks(verbose=True)
    good = []
    for d in ("reports", os.path.join("samples", "specs")):
        for name in sorted(os.listdir(os.path.join(root, d))):
            if name.endswith((".yaml", ".json")):
                good.append((os.path.join(d, name), yaml.safe_load(open(os.path.join(root, d, name)))))
    page = open(os.path.join(root, "docs", "spec.md"), encoding="utf-8").read()
    for n, (body, notes) in enumerate(re.findall(r"```yaml\n(.*?)```\n((?:<!-- .*? -->\n)*)", page, re.S), 1):
        if "error:" not in notes:
            good.append(("docs/spec.md example %d" % n, yaml.safe_load(body)))
    for what, doc in good:
        errors = list(validator.iter_errors(doc))
        T.check(not errors, "valid: %s" % what, errors[0].message if errors else "")
    for what, doc in BAD:
        schema_ok = validator.is_valid(doc)
        path = os.path.join(work, "bad.json")
        with open(path, "w") as f:
            json.dump(doc, f)
        p = tbtest.run([exe, "report", "-dir", os.path.join(root, "samples", "ascend_small"),
                        "--spec", path, "-o", os.path.join(work, "out")])
        T.check(not schema_ok and p.returncode == 3, "refused by both: %s" % what,
                "schema %s it, the command exits %d (%s)" % (
                    "accepts" if schema_ok else "refuses", p.returncode, p.stderr.strip()))
    sys.exit(T.finish())


main()
