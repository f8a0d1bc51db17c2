// cli/main.cpp — the fpcert command (everything else is the fpcert_cli library: cli/commands.hpp).
#include "cli/commands.hpp"

int main(int argc, char** argv) { return fpcert::cli::run(argc, argv); }
