#include "db/transaction.hpp"

#include "db/connection.hpp"

namespace tunedreduce::db {

Transaction::Transaction(Connection& conn, TxKind kind) : conn_(conn) {
  conn_.exec(kind == TxKind::immediate ? "BEGIN IMMEDIATE" : "BEGIN");
  open_ = true;
}

Transaction::~Transaction() {
  if (!open_) return;
  try {
    conn_.exec("ROLLBACK");
  } catch (...) {
    // The transaction may already be gone (SQLite rolls back on some errors); nothing to undo.
  }
}

void Transaction::commit() {
  conn_.exec("COMMIT");
  open_ = false;
}

void Transaction::rollback() {
  open_ = false;
  conn_.exec("ROLLBACK");
}

}  // namespace tunedreduce::db
