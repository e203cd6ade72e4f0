// civetweb (Debian's libcivetweb-dev, MIT): the embedded HTTP and WebSocket
// server of `wobble-run serve`. Debian ships no pkg-config file for it.
#include <civetweb.h>
