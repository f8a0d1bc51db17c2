// cli/main.cpp — the fpcert command (everything else is the fpcert_cli library: cli/commands.hpp).
#include "base/huge_pages.hpp"
#include "cli/commands.hpp"

int main(int argc, char** argv) {
  fpcert::keep_freed_memory();  // base/huge_pages.hpp; docs/suites.md for what it saves
  return fpcert::cli::run(argc, argv);
}
