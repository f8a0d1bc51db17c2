/* tests/plugins/no_symbol.c — a shared library that exports a misspelt enumeration function. */
#include <fpcert/plugin.h>
FPCERT_PLUGIN_EXPORT int fpcert_plugin_enumerate_v0(void) { return 0; }
