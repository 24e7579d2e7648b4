#pragma once
// RAII transaction: rolled back unless commit() was called.

namespace tunedreduce::db {

class Connection;

enum class TxKind {
  deferred,   // BEGIN: for consistent multi-statement reads
  immediate,  // BEGIN IMMEDIATE: every write; takes the write lock up front (busy handler applies)
};

class Transaction {
 public:
  Transaction(Connection& conn, TxKind kind);
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction();

  void commit();
  void rollback();

 private:
  Connection& conn_;
  bool open_ = false;
};

}  // namespace tunedreduce::db
