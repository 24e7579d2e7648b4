#!/usr/bin/env bash
# Regenerates the database fixtures of the db tests (run it when the schema changes):
#   tests/data/db/make_fixtures.sh BUILD_DIR
# needs the sqlite3 shell and BUILD_DIR/tests/db/tr_db_test_writer. The fixtures are small
# (page size 512) and checked in; the tests say what each one must provoke.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
helper=$(find "$1" -name tr_db_test_writer -type f | head -1)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$here"

shrink() {  # self-contained (no -wal), small pages
  sqlite3 "$1" "PRAGMA journal_mode=DELETE; PRAGMA page_size=512; VACUUM;" >/dev/null
}

# Not SQLite at all, and a 0-byte file.
printf 'This is a plain text file that someone named tune.db.\n' > not_sqlite.db
: > empty.db

# SQLite files of other applications: one with its own application_id, one with none.
rm -f other_app.db other_app_noid.db
sqlite3 other_app.db "PRAGMA application_id=1179863329; CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes(body) VALUES('not ours');"
sqlite3 other_app_noid.db "CREATE TABLE devices(id INTEGER PRIMARY KEY, name TEXT); INSERT INTO devices(name) VALUES('a table called devices is not enough');"
shrink other_app.db; shrink other_app_noid.db

# The version-0 prototype layout.
rm -f schema_v0.db
sqlite3 schema_v0.db < schema_v0.sql
shrink schema_v0.db

# A current database with rows, made by the real writer.
"$helper" write "$tmp/base.db" 0 40 0
shrink "$tmp/base.db"

# Newer schemas (this binary writes version 2): version 3 that declares version-2 readers
# compatible, version 4 that does not.
cp "$tmp/base.db" newer_compatible.db
sqlite3 newer_compatible.db "PRAGMA user_version=3; UPDATE meta SET value='2' WHERE key='min_reader_version'; CREATE TABLE future_notes(id INTEGER PRIMARY KEY, body TEXT);"
cp "$tmp/base.db" newer_incompatible.db
sqlite3 newer_incompatible.db "PRAGMA user_version=4; UPDATE meta SET value='4' WHERE key='min_reader_version';"
shrink newer_compatible.db; shrink newer_incompatible.db

# Version 1, the first release, with rows: its measurements table allows only the finishes
# two_pass and single_pass (version 2 added packed).
cp "$tmp/base.db" schema_v1.db
sqlite3 schema_v1.db ".dbconfig defensive off" "PRAGMA writable_schema=ON; UPDATE sqlite_schema SET sql=replace(sql, 'CHECK (finish IN (''two_pass'', ''single_pass'', ''packed''))', 'CHECK (finish IN (''two_pass'', ''single_pass''))') WHERE name='measurements'; PRAGMA writable_schema=OFF; PRAGMA user_version=1; UPDATE meta SET value='1' WHERE key='min_reader_version';" >/dev/null
sqlite3 schema_v1.db "PRAGMA integrity_check;" | grep -qx ok
shrink schema_v1.db

# Corrupt pages: the b-tree header of a leaf page of measurements overwritten with 0xff.
cp "$tmp/base.db" corrupt.db
page=$(sqlite3 corrupt.db "SELECT pageno FROM dbstat WHERE name='measurements' AND pagetype='leaf' ORDER BY pageno LIMIT 1 OFFSET 1;")
head -c 64 /dev/zero | tr '\0' '\377' | dd of=corrupt.db bs=1 seek=$(( (page - 1) * 512 )) conv=notrunc status=none
ls -l "$here"
