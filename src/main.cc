// hetsched: the command-line entry point; everything else lives in src/cli.
#include "cli/command.h"

int main(int argc, char** argv) { return hetsched::cli::Main(argc, argv); }
