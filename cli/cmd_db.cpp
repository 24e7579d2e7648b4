// Placeholder: replaced by the database work (issue 3).
#include "cli/command.hpp"
#include "common/error.hpp"
namespace tunedreduce::cli {
int cmd_db(int, char**) { throw Error("the db command is not built yet"); }
}  // namespace tunedreduce::cli
