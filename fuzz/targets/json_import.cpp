// Fuzz target: a JSON export as `tunedreduce db import` reads it: the JSON parse (common/json),
// the export's reader (db::dataset_from_json) and the import into a database (an in-memory
// one). The expected answers to bad input: std::runtime_error from the JSON parse (the CLI
// names the file and line), db::DbError from the reader and the import. Anything else is a
// finding; so is a document the writer produced that does not read back.

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string_view>

#include "common/json.hpp"
#include "db/database.hpp"
#include "db/dataset.hpp"
#include "db/db_error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tunedreduce;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  Json doc;
  try {
    doc = Json::parse(text);
  } catch (const std::runtime_error&) {
    return 0;
  }
  // What the writer writes, the parser reads back to the same value.
  if (Json::parse(doc.dump()) != doc) __builtin_trap();
  try {
    db::Dataset d = db::dataset_from_json(doc, "fuzz.json");
    db::add_provenance(d, "fuzz.json", "import");
    db::Database mem = db::Database::create_in_memory("fuzz");
    (void)db::import_dataset(mem, d);
    (void)db::dataset_to_json(db::read_dataset(mem));
  } catch (const db::DbError&) {
  }
  return 0;
}
