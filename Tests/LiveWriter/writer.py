#!/usr/bin/env python3
"""An app writing to a store as Core Data does, for `tern migrate --live` tests and benchmarks.

--model bench (a Bench 1 store) or chain (a Chain 1 store). Each commit is one transaction: keys
handed out through Z_PRIMARYKEY's Z_MAX, updates that check and bump Z_OPT, deletes that cascade
(pages) or nullify (an editor's books), links moved in foreign keys, ordered-list keys and join
tables. It writes at a fixed rate until the stop file appears, then closes the store and writes:
  --log FILE    one line per commit: operation, key, latency in ms
  --final FILE  JSON: the SQL reading a book's state (`quote`d, so any reader gets the same text),
                every book it touched as it left them (null when deleted), latency percentiles
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
parser.add_argument("--model", choices=["bench", "chain"], default="bench")
args = parser.parse_args()

random.seed(args.seed)
db = sqlite3.connect(args.store, isolation_level=None, timeout=10)
db.execute("PRAGMA busy_timeout = 10000")
assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
if args.ready:
    open(args.ready, "w").close()
log = open(args.log, "w") if args.log else None
books = {}
bench = args.model == "bench"
categories = [row[0] for row in db.execute("SELECT Z_PK FROM ZCATEGORY")] if bench else []
max_book = db.execute("SELECT max(Z_PK) FROM ZBOOK").fetchone()[0]
max_author = 0 if bench else db.execute("SELECT max(Z_PK) FROM ZAUTHOR").fetchone()[0]
STATE = (
    "SELECT quote(ZTITLE), quote(ZAUTHOR), quote(ZPRICE), quote(ZCATEGORY) FROM ZBOOK WHERE Z_PK = ?1"
    if bench else
    "SELECT quote(ZTITLE), quote(ZPRICE), quote(ZEDITOR), "
    "(SELECT group_concat(a, ',') FROM (SELECT Z_1AUTHORS AS a FROM Z_1BOOKS WHERE Z_2BOOKS = ?1 ORDER BY 1)) FROM ZBOOK WHERE Z_PK = ?1")
latencies = []


def next_key(entity, count=1):
    (high,) = db.execute("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = ?", (entity,)).fetchone()
    db.execute("UPDATE Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_NAME = ?", (high + count, entity))
    return high + 1


def state(pk):
    row = db.execute(STATE, (pk,)).fetchone()
    return ["NULL" if value is None else str(value) for value in row] if row else None


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


def some_author():
    while True:
        pk = random.randint(1, max_author)
        if db.execute("SELECT 1 FROM ZAUTHOR WHERE Z_PK = ?", (pk,)).fetchone():
            return pk


def chain_insert():
    global max_author
    if random.random() < 0.2:  # a new author now and then
        max_author = next_key("Author")
        db.execute("INSERT INTO ZAUTHOR (Z_PK, Z_ENT, Z_OPT, ZBORN, ZNAME) VALUES (?, 1, 1, ?, ?)", (max_author, 300000000.0, "Author %d" % max_author))
    pk = next_key("Book")
    db.execute("INSERT INTO ZBOOK (Z_PK, Z_ENT, Z_OPT, ZEDITOR, ZPRICE, ZNOTES, ZTITLE) VALUES (?, 2, 1, ?, ?, ?, ?)",
               (pk, some_author(), round(random.uniform(1, 90), 2), "notes %d" % pk, "live %d" % pk))
    for author in {some_author() for _ in range(random.randint(1, 3))}:
        db.execute("INSERT INTO Z_1BOOKS (Z_1AUTHORS, Z_2BOOKS) VALUES (?, ?)", (author, pk))
    return "insert", pk


def chain_update():
    pk, opt = some_book()
    db.execute("UPDATE ZBOOK SET ZPRICE = ?, ZTITLE = ?, Z_OPT = Z_OPT + 1 WHERE Z_PK = ? AND Z_OPT = ?",
               (round(random.uniform(1, 90), 2), "retitled %d" % random.randint(1, 9999), pk, opt))
    return "update", pk


def chain_relink():
    pk, opt = some_book()
    db.execute("DELETE FROM Z_1BOOKS WHERE Z_2BOOKS = ? AND Z_1AUTHORS = (SELECT min(Z_1AUTHORS) FROM Z_1BOOKS WHERE Z_2BOOKS = ?)", (pk, pk))
    db.execute("INSERT OR IGNORE INTO Z_1BOOKS (Z_1AUTHORS, Z_2BOOKS) VALUES (?, ?)", (some_author(), pk))
    db.execute("UPDATE ZBOOK SET ZEDITOR = ?, Z_OPT = Z_OPT + 1 WHERE Z_PK = ?", (some_author(), pk))
    return "relink", pk


def chain_delete():
    if random.random() < 0.3:  # an author goes: the books they edited lose their editor (nullify)
        author = some_author()
        for (book,) in db.execute("SELECT Z_PK FROM ZBOOK WHERE ZEDITOR = ?", (author,)).fetchall():
            db.execute("UPDATE ZBOOK SET ZEDITOR = NULL, Z_OPT = Z_OPT + 1 WHERE Z_PK = ?", (book,))
            books[book] = None
        for (book,) in db.execute("SELECT Z_2BOOKS FROM Z_1BOOKS WHERE Z_1AUTHORS = ?", (author,)).fetchall():
            books[book] = None
        db.execute("DELETE FROM Z_1BOOKS WHERE Z_1AUTHORS = ?", (author,))
        db.execute("DELETE FROM ZAUTHOR WHERE Z_PK = ?", (author,))
        return "delete-author", some_book()[0]
    pk, _ = some_book()
    db.execute("DELETE FROM Z_1BOOKS WHERE Z_2BOOKS = ?", (pk,))
    db.execute("DELETE FROM ZBOOK WHERE Z_PK = ?", (pk,))
    return "delete", pk


if bench:
    operations = [insert] * 3 + [update] * 4 + [relink] * 2 + [delete]
else:
    operations = [chain_insert] * 3 + [chain_update] * 4 + [chain_relink] * 2 + [chain_delete]
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
        log.write("%s %d %.3f %.3f\n" % (name, pk, latency, time.time()))
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
json.dump({"query": STATE, "books": final, "commits": len(latencies), "p50": percentile(0.5), "p99": percentile(0.99), "max": latencies[-1] if latencies else 0},
          open(args.final, "w"))
