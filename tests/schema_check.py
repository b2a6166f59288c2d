#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""schema_check.py SCHEMA_DIR SPOOL_DIR: validate every JSON document the tests captured.

Each file in SPOOL_DIR is one command's standard output, named KIND.WHERE.N.json, where
KIND names the schema (SCHEMA_DIR/KIND.json) and WHERE the test that printed it; a file
whose KIND ends in -lines (check-watch-lines) holds one document per line. One Python
start validates them all (the schemas are draft 2020-12, as python3-jsonschema 4.10 of
Debian 12 reads them). Prints each failure (the test, the path in the document, the
message) and a count; exits 1 on any failure, 0 otherwise.
"""
import json
import os
import sys

from jsonschema import Draft202012Validator, RefResolver


def main():
    sdir, spool = sys.argv[1], sys.argv[2]
    store, validators = {}, {}
    for f in sorted(os.listdir(sdir)):
        if f.endswith(".json"):
            with open(os.path.join(sdir, f)) as fh:
                s = json.load(fh)
            Draft202012Validator.check_schema(s)
            store[s["$id"]] = s
    for s in store.values():
        kind = s["$id"].rsplit("/", 1)[1][:-5]
        validators[kind] = Draft202012Validator(
            s, resolver=RefResolver(s["$id"], s, store=store),
            format_checker=Draft202012Validator.FORMAT_CHECKER)
    bad, n, kinds = 0, 0, set()
    for f in sorted(os.listdir(spool)):
        kind, where = f.split(".")[0], ".".join(f.split(".")[1:-2])
        lines = kind.endswith("-lines")
        kind = kind[: -len("-lines")] if lines else kind
        with open(os.path.join(spool, f)) as fh:
            text = fh.read()
        docs = [t for t in text.splitlines() if t.strip()] if lines else [text]
        for d in docs:
            n += 1
            kinds.add(kind)
            try:
                doc = json.loads(d)
            except ValueError as e:
                print(f"    {where}: {kind}: not JSON: {e}")
                bad += 1
                continue
            v = validators.get(kind)
            if v is None:
                print(f"    {where}: no schema {kind}.json in {sdir}")
                bad += 1
                continue
            for e in v.iter_errors(doc):
                path = "/".join(str(p) for p in e.absolute_path) or "(top)"
                print(f"    {where}: {kind}.json: {path}: {e.message[:300]}")
                bad += 1
    print(f"    {n} documents of {len(kinds)} kinds ({', '.join(sorted(kinds))}), {bad} errors")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
