#pragma once
// Schema identity, versions and migrations (docs/database.md, "Schema versions").

#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace tunedreduce::db {

class Connection;

/// PRAGMA application_id of every tunedreduce database: 'TRDB'.
inline constexpr std::int32_t application_id = 0x54524442;
/// PRAGMA user_version this binary writes and reads.
/// 1: the first release. 2: measurements.finish may also be 'packed' (kernel revision 2).
/// 3: winners have an L2 mode (cold or warm), unique per (device, dtype, op, l2_mode, n_lo).
/// 4: the tables bench_runs and bench_results (`tunedreduce bench`, db/bench.hpp).
/// 5: the table gpus, measurements.gpu_id, runs.driver_version, runtime_version, config_text.
/// 6: the operator 'exact_sum' (f32 and f64 only) in measurements, winners and bench_results.
/// 7: the operator 'wide_sum' (i32, u32 and f32 only) in measurements, winners and bench_results.
/// 8: the element types 'f16' and 'bf16' (for 'wide_sum' only) in the same three tables.
/// 9: the operators 'argmin' and 'argmax' (i32, u32, i64, u64, f32 and f64 only) in the same
/// three tables.
/// 10: the operator 'exact_sum' for the element types 'f16' and 'bf16' as well (into a float) in
/// the same three tables.
/// 11: no CHECK lists of operators and element types in the same three tables: the row validator
/// (db/row_rules.hpp) checks both names and their pair, so a new operator or element type needs
/// no migration.
/// 12: segmented measurements and winners: measurements.segment_size (NULL for a whole-array
/// measurement; part of the resume index) and the table segmented_winners.
/// 13: the table segmented_bench_results (`tunedreduce bench --segments`).
inline constexpr int schema_version = 13;
/// The first version with gpus, measurements.gpu_id and the runs' driver, runtime and
/// configuration text: readers of an older file read those as absent (NULL, no GPUs).
inline constexpr int provenance_version = 5;
/// The first version with measurements.segment_size and segmented_winners: readers of an older
/// file read every measurement as a whole-array one and no segmented winners.
inline constexpr int segmented_version = 12;
/// The first version with segmented_bench_results: readers of an older file read no segmented
/// bench results.
inline constexpr int segmented_bench_version = 13;
/// The oldest schema this binary's readers read as it is (readers never migrate): the versions
/// from it up to schema_version differ only by tables and nullable columns that were added,
/// which a reader takes for empty or NULL when a file lacks them (a version-3 file has no bench
/// runs; a version-4 file no GPUs; a file older than version 12 no segmented measurements or
/// winners; one older than 13 no segmented bench results), and by CHECK constraints that were
/// loosened to admit new operators (versions 6, 7 and 9), element types (version 8) and pairs of
/// them (version 10), which matter only to writers: an older file simply has no rows of those
/// operators, types and pairs. Older files are refused (Problem::too_old: `tunedreduce db migrate`
/// upgrades them).
inline constexpr int oldest_readable_version = 3;
/// Stored in meta.min_reader_version: the oldest reader that may read this schema. A schema that
/// only adds tables or nullable columns keeps it; one that changes meaning raises it. Version 2
/// raised it to 2: a version-1 reader does not know the finish 'packed'. Version 3 raised it to 3:
/// a file may hold a cold and a warm winner for the same sizes, which a version-2 reader, blind to
/// the mode, would take for two overlapping winners of one (device, dtype, op). Version 4 only
/// added tables, and keeps it: a version-3 reader reads a version-4 file without its bench runs.
/// Version 5 only added a table and nullable columns, and keeps it too. Version 6 raised it to 6:
/// a file may hold rows of the operator 'exact_sum', which an older reader cannot name. Version 7
/// raised it to 7 for the same reason: a file may hold rows of the operator 'wide_sum', which a
/// version-6 reader cannot name. Version 8 raised it to 8: a file may hold rows of the element
/// types 'f16' and 'bf16', which a version-7 reader cannot name. Version 9 raised it to 9: a file
/// may hold rows of the operators 'argmin' and 'argmax', which a version-8 reader cannot name.
/// Version 10 raised it to 10: a file may hold rows of the operator 'exact_sum' of the element
/// types 'f16' and 'bf16', a pair a version-9 reader's op_applies refuses (and whose result, a
/// float, it would take for the element type). Version 11 raised it to 11: without the schema's
/// lists, a file may hold rows of an operator or element type a later binary added, which a
/// version-10 reader (its unknown names read as the enums' first values) would misread; readers
/// of version 11 skip such rows by name. Version 12 raised it to 12: a file may hold segmented
/// measurements, whose n is the total of many segments, which a version-11 reader (blind to
/// segment_size) would take for whole-array measurements of n elements. Version 13 only added a
/// table, and keeps it.
inline constexpr int min_reader_version = 12;

/// Whether the file has the table \p name.
bool has_table(Connection& conn, const char* name);

/// What a database file says about itself, read without touching any table but meta.
struct SchemaState {
  std::int32_t application_id = 0;
  int user_version = 0;
  int table_count = 0;  // tables in sqlite_schema, SQLite's own excluded
  std::optional<int> min_reader_version;
};

SchemaState read_schema_state(Connection& conn);

/// What opening for reading or writing should do with a file in \p state.
enum class SchemaAction {
  use,      // current (or newer but readable): use as is
  create,   // empty SQLite file: a writer creates the schema
  migrate,  // older schema of ours: a writer migrates it
};

/// Throws DbError (foreign, empty, too_new, too_old) when the file cannot be used for the access
/// asked for; otherwise says what to do. \p binary_version is the schema version of the binary
/// that asks: this one's, except in tests that play an older binary; \p oldest_readable the
/// oldest version its readers read as is (this binary's oldest_readable_version; an older binary
/// played in a test reads only its own version).
SchemaAction classify(const SchemaState& state, const Connection& conn, bool for_writing,
                      int binary_version = schema_version,
                      int oldest_readable = oldest_readable_version);

/// One step of the schema history: turns version `from` into `from + 1`.
struct Migration {
  int from;
  const char* description;
  void (*apply)(Connection& conn);
};

/// The real history: step 0 -> 1 creates the schema or upgrades the version-0 prototype layout;
/// 1 -> 2 admits the finish 'packed'; 2 -> 3 gives winners an L2 mode; 3 -> 4 adds the bench
/// tables; 4 -> 5 adds the GPUs and the runs' driver, runtime and configuration text; 5 -> 6
/// admits the operator 'exact_sum'; 6 -> 7 admits the operator 'wide_sum'; 7 -> 8 admits the
/// element types 'f16' and 'bf16' (for 'wide_sum' only); 8 -> 9 admits the operators 'argmin'
/// and 'argmax' (for the 4- and 8-byte types only); 9 -> 10 admits 'exact_sum' of 'f16' and
/// 'bf16'; 10 -> 11 drops the lists of operators and element types (the row validator checks
/// them); 11 -> 12 adds segmented measurements (segment_size) and winners. A new file is created at
/// version 1 and migrated forward, so it has exactly the schema of a migrated one.
std::span<const Migration> migrations();

/// Brings the schema to \p target with \p steps, inside the caller's BEGIN IMMEDIATE transaction,
/// then stamps application_id, user_version and meta. Any failure leaves the transaction to roll
/// back: a migration is all or nothing.
void apply_migrations(Connection& conn, std::span<const Migration> steps, int target);

/// The SQL that creates schema version 1 from nothing.
const char* schema_v1_sql();

}  // namespace tunedreduce::db
