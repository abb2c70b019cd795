// Compiles nothing: the target exists to build the precompiled header the test targets reuse
// (tests/CMakeLists.txt).
