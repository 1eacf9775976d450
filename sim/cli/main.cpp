#include "cli.hpp"
#include "sim/core/replace_new.inc"

int main(int argc, char** argv) { return hcsim::cli_main(argc, argv); }
