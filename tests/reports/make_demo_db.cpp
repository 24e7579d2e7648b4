// tr_report_demo_db OUT.db [--hostile] [--small] [--bench] [--warm] [--argmin] [--segmented]:
// writes a synthetic tuning database (see demo_db.hpp) for screenshots and manual checks of
// `tunedreduce report`.

#include <cstring>
#include <exception>
#include <iostream>

#include "demo_db.hpp"

int main(int argc, char** argv) {
  using namespace tunedreduce::reports::test;
  if (argc < 2) {
    std::cerr << "usage: tr_report_demo_db OUT.db [--hostile] [--small] [--bench] [--warm] "
                 "[--argmin] [--segmented]\n";
    return 2;
  }
  DemoOptions o;
  for (int i = 2; i < argc; ++i) {
    if (std::strcmp(argv[i], "--hostile") == 0) {
      o.hostile = true;
    } else if (std::strcmp(argv[i], "--bench") == 0) {
      o.bench = true;  // bench runs on the H100 (report bench, CUB in best and variants)
    } else if (std::strcmp(argv[i], "--warm") == 0) {
      o.warm_run = true;
    } else if (std::strcmp(argv[i], "--argmin") == 0) {
      o.arg_ops = true;  // i32 argmin and f64 argmax too (schema version 9)
    } else if (std::strcmp(argv[i], "--segmented") == 0) {
      o.segmented = true;  // segmented f32 sum (schema version 12: report segmented)
    } else if (std::strcmp(argv[i], "--small") == 0) {
      o.log2_step = 2;
      o.config_stride = 3;
    } else {
      std::cerr << "tr_report_demo_db: unknown option '" << argv[i] << "'\n";
      return 2;
    }
  }
  try {
    write_demo(argv[1], o);
  } catch (const std::exception& e) {
    std::cerr << "tr_report_demo_db: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
