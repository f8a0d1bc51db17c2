/* tests/plugins/missing_dep.c — a library the fault_missing_dep plugin links against; it is built into
 * a folder that is on no search path and the plugin carries no RPATH, so dlopen cannot find it. */
int fpcert_test_missing_dep_value(void) { return 42; }
