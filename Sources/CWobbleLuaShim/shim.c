#include "wobble_lua_shim.h"
int wobble_placeholder(void) { return 0; }
