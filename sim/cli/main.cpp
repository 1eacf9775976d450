#include "cli.hpp"

int main(int argc, char** argv) { return hcsim::cli_main(argc, argv); }
