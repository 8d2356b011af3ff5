// CppUTest entry point shared by every test executable.
#include <CppUTest/CommandLineTestRunner.h>

int main(int argc, char** argv) { return CommandLineTestRunner::RunAllTests(argc, argv); }
