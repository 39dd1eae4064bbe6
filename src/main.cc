#include "cli/commands.h"

int main(int argc, char** argv) { return gpupin::Dispatch(argc, argv); }
