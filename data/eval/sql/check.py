#!/usr/bin/env python3
"""Checker for the Lá Bàng text-to-SQL evaluation set.

  python3 check.py              # SQLite checks (required to pass)
  python3 check.py --pg "psql -h HOST -p PORT -d DB"   # also run every gold_sql on PostgreSQL
                                                       # (schema.sql + data.sql already loaded there)
                                                       # and compare results with SQLite

What it checks
  * make_data.py reproduces data.sql byte for byte;
  * schema.sql + data.sql load into an in-memory SQLite with no foreign-key violations;
  * every question line has the required fields and consistent values;
  * every gold_sql is a single read-only SELECT/WITH, runs, returns a non-empty result that is
    not just NULLs, and returns the same result on a second database whose rows were inserted
    in reverse order (catches ties under LIMIT and order-dependent results);
    order_matters=true requires an ORDER BY;
  * docs turns cite existing doc_ids, and every must_contain string occurs in one of the cited docs.
Exits 1 on any failure and prints counts by split and category.
"""
import collections
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SPLITS = ["dev", "test"]
CATEGORIES = ["single_table", "group_by", "date_range", "join2", "join3", "top_k", "ratio",
              "write_request", "unanswerable", "docs", "small_talk"]
SQL_CATS = {"single_table", "group_by", "date_range", "join2", "join3", "top_k", "ratio"}
KINDS = {"standalone", "follow_up"}
ROADS = {"sql", "docs", "direct"}
REQUIRED = ["conv_id", "turn", "lang", "question", "kind", "category", "road", "gold_sql",
            "order_matters", "answerable", "note"]

errors = []


def err(msg):
    errors.append(msg)


def read(name):
    with open(os.path.join(HERE, name), encoding="utf-8") as f:
        return f.read()


def check_reproducible():
    with tempfile.TemporaryDirectory() as td:
        out = os.path.join(td, "data.sql")
        env = dict(os.environ, LB_DATA_OUT=out)
        subprocess.run([sys.executable, os.path.join(HERE, "make_data.py")], env=env,
                       check=True, stdout=subprocess.DEVNULL)
        with open(out, "rb") as f:
            regenerated = f.read()
    with open(os.path.join(HERE, "data.sql"), "rb") as f:
        if f.read() != regenerated:
            err("make_data.py does not reproduce data.sql byte for byte")


def load_db(reverse=False):
    con = sqlite3.connect(":memory:")
    con.executescript(read("schema.sql"))
    data = read("data.sql").splitlines()
    inserts = [l for l in data if l.startswith("INSERT INTO ")]
    if reverse:
        by_table = collections.OrderedDict()
        for l in inserts:
            by_table.setdefault(l.split()[2], []).append(l)
        inserts = [l for t in by_table for l in reversed(by_table[t])]
        con.executescript("BEGIN;\n" + "\n".join(inserts) + "\nCOMMIT;")
    else:
        con.executescript("\n".join(data))
    fk = con.execute("PRAGMA foreign_key_check").fetchall()
    if fk:
        err(f"foreign key violations: {fk[:5]}")
    return con


def norm(v):
    if isinstance(v, float):
        return round(v, 6)
    return v


def sortkey(row):
    return tuple((0, x) if isinstance(x, (int, float)) else (1, "") if x is None else (2, str(x))
                 for x in row)


def run(con, sql):
    rows = con.execute(sql).fetchall()
    return [tuple(norm(v) for v in r) for r in rows]


def outer_order_by(sql):
    """Return (head, order_list, limit) if sql ends with a top-level ORDER BY [LIMIT n]."""
    depth, pos = 0, None
    low = sql.lower()
    for i, ch in enumerate(sql):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif depth == 0 and low.startswith("order by", i):
            pos = i
    if pos is None:
        return None
    m = re.match(r"order\s+by\s+(.*?)(\s+limit\s+\d+)?\s*$", sql[pos:], re.I | re.S)
    if not m:
        return None
    return sql[:pos], m.group(1), m.group(2) or ""


def tie_sensitive(con, sql, order_matters):
    """True if breaking ORDER BY ties in two opposite ways changes the result."""
    parts = outer_order_by(sql)
    if not parts:
        return False
    head, keys, limit = parts
    if not limit and not order_matters:
        return False
    ncol = len(con.execute(sql).description)
    asc = ", ".join(f"{i} ASC" for i in range(1, ncol + 1))
    desc = ", ".join(f"{i} DESC" for i in range(1, ncol + 1))
    a = run(con, f"{head}ORDER BY {keys}, {asc}{limit}")
    b = run(con, f"{head}ORDER BY {keys}, {desc}{limit}")
    if order_matters:
        return a != b
    return sorted(a, key=sortkey) != sorted(b, key=sortkey)


def load_docs():
    docs = {}
    ddir = os.path.join(HERE, "docs")
    for fn in sorted(os.listdir(ddir)):
        if not fn.endswith(".md"):
            continue
        text = open(os.path.join(ddir, fn), encoding="utf-8").read()
        m = re.match(r"^---\n(.*?)\n---\n", text, re.S)
        if not m:
            err(f"docs/{fn}: missing front matter")
            continue
        fm = dict(l.split(":", 1) for l in m.group(1).splitlines() if ":" in l)
        fm = {k.strip(): v.strip().strip('"') for k, v in fm.items()}
        for k in ("doc_id", "title", "date"):
            if k not in fm:
                err(f"docs/{fn}: front matter lacks {k}")
        docs[fm.get("doc_id")] = text
    return docs


def pg_run(pg_cmd, sql):
    cmd = pg_cmd.split() + ["-X", "-A", "-t", "-F", "\x1f", "-v", "ON_ERROR_STOP=1", "-c", sql]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(p.stderr.strip())
    return [tuple(line.split("\x1f")) for line in p.stdout.splitlines() if line != ""]


def same_value(a, b):
    # a from SQLite (python value), b from psql (text)
    if a is None:
        return b == ""
    if isinstance(a, (int, float)):
        try:
            return abs(float(b) - float(a)) <= 1e-6 * max(1.0, abs(float(a)))
        except ValueError:
            return False
    return str(a) == b


def main():
    pg_cmd = None
    if "--pg" in sys.argv:
        pg_cmd = sys.argv[sys.argv.index("--pg") + 1]
    check_reproducible()
    con = load_db()
    con_rev = load_db(reverse=True)
    docs = load_docs()

    counts = {s: collections.Counter() for s in SPLITS}
    fu_counts = {s: collections.Counter() for s in SPLITS}
    kinds = {s: collections.Counter() for s in SPLITS}
    langs = {s: collections.Counter() for s in SPLITS}
    roads = {s: collections.Counter() for s in SPLITS}
    convs = {s: set() for s in SPLITS}
    seen_conv = {}
    n_sql = 0
    pg_ok = 0
    for split in SPLITS:
        path = os.path.join(HERE, split, "questions.jsonl")
        last = {}
        for ln, line in enumerate(open(path, encoding="utf-8"), start=1):
            where = f"{split}:{ln}"
            if not line.strip():
                err(f"{where}: blank line")
                continue
            q = json.loads(line)
            for k in REQUIRED:
                if k not in q:
                    err(f"{where}: missing field {k}")
            cid, turn = q.get("conv_id"), q.get("turn")
            where = f"{split}:{ln} {cid}#{turn}"
            if seen_conv.setdefault(cid, split) != split:
                err(f"{where}: conversation appears in both splits")
            if turn != last.get(cid, 0) + 1:
                err(f"{where}: turns must be consecutive from 1")
            last[cid] = turn
            convs[split].add(cid)
            if q["lang"] not in ("vi", "en"):
                err(f"{where}: bad lang")
            if q["kind"] not in KINDS:
                err(f"{where}: bad kind {q['kind']}")
            if q["kind"] == "follow_up" and turn == 1:
                err(f"{where}: follow_up on turn 1")
            if q["category"] not in CATEGORIES:
                err(f"{where}: bad category {q['category']}")
            if q["road"] not in ROADS:
                err(f"{where}: bad road")
            cat, road, sql = q["category"], q["road"], q["gold_sql"]
            counts[split][cat] += 1
            kinds[split][q["kind"]] += 1
            if q["kind"] == "follow_up":
                fu_counts[split][cat] += 1
            langs[split][q["lang"]] += 1
            roads[split][road] += 1
            if cat in SQL_CATS:
                if road != "sql" or not q["answerable"] or not sql:
                    err(f"{where}: answerable sql turn needs road sql, answerable true, gold_sql")
            if cat in ("write_request", "unanswerable"):
                if road != "sql" or q["answerable"] or sql is not None:
                    err(f"{where}: {cat} needs road sql, answerable false, gold_sql null")
            if cat == "docs":
                if road != "docs" or sql is not None:
                    err(f"{where}: docs turn needs road docs and gold_sql null")
                ids = q.get("gold_doc_ids") or []
                mc = q.get("must_contain") or []
                if not ids or not mc:
                    err(f"{where}: docs turn needs gold_doc_ids and must_contain")
                for d in ids:
                    if d not in docs:
                        err(f"{where}: unknown doc_id {d}")
                for s in mc:
                    if not any(s.lower() in docs.get(d, "").lower() for d in ids):
                        err(f"{where}: must_contain {s!r} not found in cited docs")
            if cat == "small_talk":
                if road != "direct" or sql is not None:
                    err(f"{where}: small_talk needs road direct and gold_sql null")
            if q["order_matters"] and not (sql and re.search(r"order\s+by", sql, re.I)):
                err(f"{where}: order_matters without ORDER BY")
            if sql is None:
                continue
            n_sql += 1
            s = sql.strip().rstrip(";")
            if ";" in s or not re.match(r"^(select|with)\b", s, re.I):
                err(f"{where}: gold_sql must be a single SELECT/WITH")
                continue
            try:
                r1 = run(con, s)
                r2 = run(con_rev, s)
            except sqlite3.Error as e:
                err(f"{where}: SQLite error: {e}")
                continue
            if not r1 or all(v is None for row in r1 for v in row):
                err(f"{where}: empty or all-NULL result")
                continue
            if q["order_matters"]:
                if r1 != r2:
                    err(f"{where}: result depends on row order (ties?)")
            elif sorted(r1, key=sortkey) != sorted(r2, key=sortkey):
                err(f"{where}: result depends on row order (ties under LIMIT?)")
            try:
                if tie_sensitive(con, s, q["order_matters"]):
                    err(f"{where}: ties in ORDER BY change the answer (top-k cut or order)")
            except sqlite3.Error as e:
                err(f"{where}: tie check failed: {e}")
            if pg_cmd:
                try:
                    rp = pg_run(pg_cmd, s)
                except RuntimeError as e:
                    err(f"{where}: PostgreSQL error: {e}")
                    continue
                a = r1 if q["order_matters"] else sorted(r1, key=sortkey)
                b = rp
                if not q["order_matters"]:
                    # sort psql rows with the SQLite row order as reference
                    remaining = list(rp)
                    b = []
                    for row in a:
                        for i, prow in enumerate(remaining):
                            if len(prow) == len(row) and all(same_value(x, y) for x, y in zip(row, prow)):
                                b.append(remaining.pop(i))
                                break
                    b += remaining
                if len(a) != len(b) or not all(
                        len(x) == len(y) and all(same_value(u, v) for u, v in zip(x, y))
                        for x, y in zip(a, b)):
                    err(f"{where}: PostgreSQL result differs: {a[:3]} vs {b[:3]}")
                else:
                    pg_ok += 1

    # report
    print("counts by split and category")
    print(f"{'category':14s} {'dev':>5s} {'test':>5s} {'all':>5s}   follow-up turns (dev/test)")
    for c in CATEGORIES:
        d, t = counts["dev"][c], counts["test"][c]
        print(f"{c:14s} {d:5d} {t:5d} {d + t:5d}   {fu_counts['dev'][c]}/{fu_counts['test'][c]}")
    td, tt = sum(counts["dev"].values()), sum(counts["test"].values())
    print(f"{'TOTAL turns':14s} {td:5d} {tt:5d} {td + tt:5d}")
    print(f"{'conversations':14s} {len(convs['dev']):5d} {len(convs['test']):5d} "
          f"{len(convs['dev']) + len(convs['test']):5d}")
    for label, tab in (("kind", kinds), ("lang", langs), ("road", roads)):
        keys = sorted(set(tab["dev"]) | set(tab["test"]))
        for k in keys:
            print(f"{label + '=' + k:14s} {tab['dev'][k]:5d} {tab['test'][k]:5d} "
                  f"{tab['dev'][k] + tab['test'][k]:5d}")
    print(f"gold_sql run on SQLite: {n_sql}" + (f"; matched on PostgreSQL: {pg_ok}" if pg_cmd else ""))
    if errors:
        print(f"\nFAILED: {len(errors)} problem(s)")
        for e in errors:
            print("  -", e)
        sys.exit(1)
    print("OK")


if __name__ == "__main__":
    main()
