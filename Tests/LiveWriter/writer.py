#!/usr/bin/env python3
"""An app writing to a Bench 1 store as Core Data does, for `tern migrate --live` tests and benchmarks.

Each commit is one transaction: keys handed out through Z_PRIMARYKEY's Z_MAX, updates that check and
bump Z_OPT, deletes that cascade to pages, links moved in foreign keys and ordered-list keys. It
writes at a fixed rate until the stop file appears, then closes the store and writes:
  --log FILE    one line per commit: operation, keys, latency in ms
  --final FILE  JSON: every book it touched, as it left it (null when deleted), and latency percentiles
"""
import argparse, json, os, random, sqlite3, sys, time

parser = argparse.ArgumentParser()
parser.add_argument("store")
parser.add_argument("--rate", type=float, default=1000, help="commits per second")
parser.add_argument("--stop", required=True, help="close the store and exit once this file exists")
parser.add_argument("--log")
parser.add_argument("--final", required=True)
parser.add_argument("--seed", type=int, default=1)
parser.add_argument("--ready", help="created once the store is open")
args = parser.parse_args()

random.seed(args.seed)
db = sqlite3.connect(args.store, isolation_level=None, timeout=10)
db.execute("PRAGMA busy_timeout = 10000")
assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
if args.ready:
    open(args.ready, "w").close()
log = open(args.log, "w") if args.log else None
books = {}
categories = [row[0] for row in db.execute("SELECT Z_PK FROM ZCATEGORY")]
max_book = db.execute("SELECT max(Z_PK) FROM ZBOOK").fetchone()[0]
latencies = []


def next_key(entity, count=1):
    (high,) = db.execute("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = ?", (entity,)).fetchone()
    db.execute("UPDATE Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_NAME = ?", (high + count, entity))
    return high + 1


def state(pk):
    row = db.execute("SELECT ZTITLE, ZAUTHOR, ZPRICE, ZCATEGORY FROM ZBOOK WHERE Z_PK = ?", (pk,)).fetchone()
    return list(row) if row else None


def insert():
    pk = next_key("Book")
    page = next_key("Page", 2)
    title = "live %d" % pk
    db.execute(
        "INSERT INTO ZBOOK (Z_PK, Z_ENT, Z_OPT, ZCATEGORY, ZPRICE, ZPUBLISHED, ZAUTHOR, ZTITLE) VALUES (?, 1, 1, ?, ?, ?, ?, ?)",
        (pk, random.choice(categories), round(random.uniform(1, 90), 2), 700000000.0 + pk, "Ada Writer%d" % pk, title))
    for n in range(2):
        db.execute("INSERT INTO ZPAGE (Z_PK, Z_ENT, Z_OPT, ZNUMBER, ZBOOK, Z_FOK_BOOK, ZTEXT) VALUES (?, 3, 1, ?, ?, ?, ?)",
                   (page + n, n + 1, pk, 1024 * (n + 1), "text %d" % n))
    return "insert", pk


def some_book():
    while True:
        pk = random.randint(1, max_book)
        row = db.execute("SELECT Z_OPT FROM ZBOOK WHERE Z_PK = ?", (pk,)).fetchone()
        if row:
            return pk, row[0]


def update():
    pk, opt = some_book()
    changed = db.execute("UPDATE ZBOOK SET ZPRICE = ?, ZAUTHOR = ?, Z_OPT = Z_OPT + 1 WHERE Z_PK = ? AND Z_OPT = ?",
                         (round(random.uniform(1, 90), 2), "Grace Editor%d" % random.randint(1, 999), pk, opt)).rowcount
    assert changed == 1, "optimistic locking failed"
    return "update", pk


def relink():
    pk, opt = some_book()
    db.execute("UPDATE ZBOOK SET ZCATEGORY = ?, Z_OPT = Z_OPT + 1 WHERE Z_PK = ? AND Z_OPT = ?", (random.choice(categories), pk, opt))
    # a page moves to the end of another book's ordered list
    other, _ = some_book()
    page = db.execute("SELECT Z_PK FROM ZPAGE WHERE ZBOOK = ? LIMIT 1", (pk,)).fetchone()
    if page:
        (last,) = db.execute("SELECT coalesce(max(Z_FOK_BOOK), 0) FROM ZPAGE WHERE ZBOOK = ?", (other,)).fetchone()
        db.execute("UPDATE ZPAGE SET ZBOOK = ?, Z_FOK_BOOK = ?, Z_OPT = Z_OPT + 1 WHERE Z_PK = ?", (other, last + 1024, page[0]))
        books.setdefault(other, None)
    return "relink", pk


def delete():
    pk, _ = some_book()
    db.execute("DELETE FROM ZPAGE WHERE ZBOOK = ?", (pk,))
    db.execute("DELETE FROM ZBOOK WHERE Z_PK = ?", (pk,))
    return "delete", pk


operations = [insert] * 3 + [update] * 4 + [relink] * 2 + [delete]
interval = 1.0 / args.rate
due = time.monotonic()
while not os.path.exists(args.stop):
    operation = random.choice(operations)
    started = time.monotonic()
    db.execute("BEGIN IMMEDIATE")
    try:
        name, pk = operation()
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    ended = time.monotonic()
    latency = (ended - started) * 1000
    latencies.append(latency)
    books[pk] = None
    max_book = max(max_book, pk)
    if log:
        log.write("%s %d %.3f\n" % (name, pk, latency))
    due += interval
    pause = due - time.monotonic()
    if pause > 0:
        time.sleep(pause)
    elif pause < -1:
        due = time.monotonic()  # fell behind by a second: do not burst to catch up

final = {str(pk): state(pk) for pk in books}
db.close()
latencies.sort()
def percentile(p):
    return latencies[min(len(latencies) - 1, int(p * len(latencies)))] if latencies else 0
json.dump({"books": final, "commits": len(latencies), "p50": percentile(0.5), "p99": percentile(0.99), "max": latencies[-1] if latencies else 0},
          open(args.final, "w"))
