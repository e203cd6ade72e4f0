// The only hand-written C of wobble-run: see include/wobble_lua_shim.h.
#include <errno.h>
#include "wobble_lua_shim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/// Instructions between two runs of the count hook.
#define WOBBLE_HOOK_COUNT 1000

/// While a Swift host function runs, the allocator may not return NULL (Lua
/// would longjmp through Swift): it lets the state grow up to this much past
/// its limit, and the trampoline raises "not enough memory" from C once Swift
/// has returned. Only Lua finalizers (`__gc`) that run during a host call can
/// exhaust this headroom; then the process stops with a message.
#define WOBBLE_HOST_HEADROOM ((size_t)64 << 20)

/// Registry key of the traceback kept by the message handler.
#define WOBBLE_TRACEBACK_KEY "wobble.traceback"

/// Per-state bookkeeping, the allocator's `ud` (found with lua_getallocf).
typedef struct wobble_vm {
    size_t used;
    size_t limit;
    int in_host;                 // depth of Swift host calls on the C stack
    int stop;                    // WOBBLE_STOP_*
    double deadline;             // CLOCK_MONOTONIC seconds; 0: none
    double timeout;              // seconds, for the message
    void *ctx;
    wobble_dispatch_fn dispatch;
    wobble_abort_fn should_abort;
} wobble_vm;

static wobble_vm *wobble_vm_of(lua_State *L) {
    void *ud = NULL;
    lua_getallocf(L, &ud);
    return (wobble_vm *)ud;
}

static double wobble_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/// Why: the memory limit. Returning NULL makes Lua raise "not enough
/// memory", which is only safe when no Swift frame is between the
/// allocation and the enclosing protected call.
static void *wobble_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
    wobble_vm *vm = (wobble_vm *)ud;
    size_t old = ptr ? osize : 0;
    if (nsize == 0) {
        free(ptr);
        vm->used -= old;
        return NULL;
    }
    if (nsize > old) {
        size_t grow = nsize - old;
        size_t cap = vm->limit + (vm->in_host ? WOBBLE_HOST_HEADROOM : 0);
        if (vm->used > cap || grow > cap - vm->used) {
            if (vm->in_host) {
                fprintf(stderr, "wobble-run: out of memory: the script used more than %zu MiB of Lua memory "
                        "while an API function ran (a __gc finalizer?)\n", (vm->limit + WOBBLE_HOST_HEADROOM) >> 20);
                abort();
            }
            return NULL;
        }
    }
    void *p = realloc(ptr, nsize);
    if (p == NULL) {
        if (vm->in_host) {
            fprintf(stderr, "wobble-run: out of memory while an API function ran\n");
            abort();
        }
        return NULL;
    }
    vm->used = vm->used - old + nsize;
    return p;
}

/// Why: an error outside any protected call (only possible while the host
/// sets the state up) must end the process with a message, not silently.
static int wobble_panic(lua_State *L) {
    const char *msg = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "(error object is not a string)";
    fprintf(stderr, "wobble-run: Lua panic: %s\n", msg);
    abort();
    return 0;
}

lua_State *wobble_newstate(size_t limit_bytes) {
    wobble_vm *vm = calloc(1, sizeof *vm);
    if (vm == NULL) return NULL;
    vm->limit = limit_bytes;
    lua_State *L = lua_newstate(wobble_alloc, vm);
    if (L == NULL) {
        free(vm);
        return NULL;
    }
    lua_atpanic(L, wobble_panic);
    return L;
}

void wobble_close(lua_State *L) {
    wobble_vm *vm = wobble_vm_of(L);
    lua_close(L);   // runs finalizers, which still use vm
    free(vm);
}

void wobble_set_host(lua_State *L, void *ctx, wobble_dispatch_fn dispatch, wobble_abort_fn should_abort) {
    wobble_vm *vm = wobble_vm_of(L);
    vm->ctx = ctx;
    vm->dispatch = dispatch;
    vm->should_abort = should_abort;
}

int wobble_stop_reason(lua_State *L) { return wobble_vm_of(L)->stop; }

size_t wobble_memory_used(lua_State *L) { return wobble_vm_of(L)->used; }

/// Why: `--timeout` and SIGINT/SIGTERM. Raising from a hook is allowed; once
/// stopped, the hook runs on every instruction of any thread it fires in,
/// so a script that catches the error with pcall is stopped again at its
/// next instruction outside that pcall.
static void wobble_hook(lua_State *L, lua_Debug *ar) {
    (void)ar;
    wobble_vm *vm = wobble_vm_of(L);
    if (vm->stop == WOBBLE_STOP_NONE) {
        if (vm->deadline > 0 && wobble_now() >= vm->deadline) {
            vm->stop = WOBBLE_STOP_TIMEOUT;
        } else if (vm->should_abort != NULL && vm->should_abort(vm->ctx)) {
            vm->stop = WOBBLE_STOP_INTERRUPTED;
        }
    }
    if (vm->stop == WOBBLE_STOP_NONE) return;
    lua_sethook(L, wobble_hook, LUA_MASKCOUNT, 1);
    luaL_where(L, 0);   // in a hook, level 0 is the Lua function running
    if (vm->stop == WOBBLE_STOP_TIMEOUT) {
        lua_pushfstring(L, "script timed out after %f s (--timeout)", (lua_Number)vm->timeout);
    } else {
        lua_pushliteral(L, "interrupted");
    }
    lua_concat(L, 2);
    lua_error(L);
}

void wobble_install_hook(lua_State *L, double seconds) {
    wobble_vm *vm = wobble_vm_of(L);
    vm->stop = WOBBLE_STOP_NONE;
    vm->timeout = seconds;
    vm->deadline = seconds > 0 ? wobble_now() + seconds : 0;
    lua_sethook(L, wobble_hook, LUA_MASKCOUNT, WOBBLE_HOOK_COUNT);
}

/// Why: every host function is this C function with its Swift index as
/// upvalue 1; errors reported by Swift are raised here, after Swift
/// returned, with the caller's position (`scene.lua:12: `) in front.
static int wobble_trampoline(lua_State *L) {
    wobble_vm *vm = wobble_vm_of(L);
    int isnum = 0;
    lua_Integer index = lua_tointegerx(L, lua_upvalueindex(1), &isnum);
    int n;
    if (vm->dispatch == NULL || !isnum) {
        lua_pushliteral(L, "wobble-run: the scene is no longer running");
        n = WOBBLE_RAISE;
    } else {
        vm->in_host++;
        n = vm->dispatch(L, vm->ctx, index);
        vm->in_host--;
    }
    if (n < 0) {
        luaL_where(L, 1);
        lua_rotate(L, -2, 1);
        lua_concat(L, 2);
        return lua_error(L);
    }
    if (vm->in_host == 0 && vm->used > vm->limit) {
        return luaL_error(L, "not enough memory (the limit is %d MiB of Lua memory)", (int)(vm->limit >> 20));
    }
    return n;
}

void wobble_push_hostfunction(lua_State *L, lua_Integer index) {
    lua_pushinteger(L, index);
    lua_pushcclosure(L, wobble_trampoline, 1);
}

/// Why: the message handler of the top-level pcall. Returns the message
/// (like lua.c's msghandler) and keeps the traceback in the registry, so
/// the host prints one clear first line and the details after.
static int wobble_msghandler(lua_State *L) {
    if (lua_type(L, 1) != LUA_TSTRING && lua_type(L, 1) != LUA_TNUMBER) {
        // No script code (__tostring) once stopped: it could run with hooks off.
        if (wobble_vm_of(L)->stop == WOBBLE_STOP_NONE && luaL_callmeta(L, 1, "__tostring")
            && lua_type(L, -1) == LUA_TSTRING) {
            lua_replace(L, 1);
        } else {
            lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
            lua_replace(L, 1);
        }
    } else {
        lua_tostring(L, 1);   // a number becomes its string
    }
    lua_settop(L, 1);
    luaL_traceback(L, L, NULL, 1);
    lua_setfield(L, LUA_REGISTRYINDEX, WOBBLE_TRACEBACK_KEY);
    return 1;
}

int wobble_pcall_traceback(lua_State *L, int nargs, int nresults) {
    int base = lua_gettop(L) - nargs;
    lua_pushcfunction(L, wobble_msghandler);
    lua_rotate(L, base, 1);
    int status = lua_pcall(L, nargs, nresults, base);
    lua_rotate(L, base, -1);
    lua_pop(L, 1);
    return status;
}

void wobble_take_traceback(lua_State *L) {
    lua_pushliteral(L, WOBBLE_TRACEBACK_KEY);
    lua_rawget(L, LUA_REGISTRYINDEX);
    lua_pushliteral(L, WOBBLE_TRACEBACK_KEY);
    lua_pushnil(L);
    lua_rawset(L, LUA_REGISTRYINDEX);
}

/// Why: `load` of binary chunks is not available in the sandbox:
/// calls the original `load` (upvalue 1) with the mode forced to "t".
static int wobble_textload(lua_State *L) {
    int n = lua_gettop(L);
    if (n < 3) lua_settop(L, 3);
    lua_pushliteral(L, "t");
    lua_replace(L, 3);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_rotate(L, 1, 1);
    lua_call(L, n > 3 ? n : 3, LUA_MULTRET);
    return lua_gettop(L);
}

void wobble_push_textload(lua_State *L) { lua_pushcclosure(L, wobble_textload, 1); }

/// Continuation of the wrappers below: their results are the wrapped call's.
static int wobble_results_k(lua_State *L, int status, lua_KContext ctx) {
    (void)status;
    (void)ctx;
    return lua_gettop(L);
}

/// Calls upvalue 1 (the original function) with all arguments; yieldable.
static int wobble_call_original(lua_State *L) {
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_rotate(L, 1, 1);
    lua_callk(L, lua_gettop(L) - 1, LUA_MULTRET, 0, wobble_results_k);
    return lua_gettop(L);
}

/// The message handler given to the original xpcall: once the script is
/// stopped it returns the error untouched instead of calling the script's
/// handler, because Lua calls a handler for an error raised by a hook with
/// hooks switched off, and a looping handler would never be stopped.
static int wobble_xpcall_handler(lua_State *L) {
    if (wobble_vm_of(L)->stop != WOBBLE_STOP_NONE) return lua_gettop(L) > 0 ? 1 : 0;
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_rotate(L, 1, 1);
    lua_call(L, lua_gettop(L) - 1, 1);
    return 1;
}

/// Why: `xpcall(f, msgh, ...)` whose handler cannot outlive --timeout (see
/// wobble_xpcall_handler); upvalue 1 is the original xpcall.
static int wobble_xpcall(lua_State *L) {
    luaL_checktype(L, 2, LUA_TFUNCTION);
    lua_pushvalue(L, 2);
    lua_pushcclosure(L, wobble_xpcall_handler, 1);
    lua_replace(L, 2);
    return wobble_call_original(L);
}

void wobble_push_xpcall(lua_State *L) { lua_pushcclosure(L, wobble_xpcall, 1); }

/// Why: Lua runs `__gc` finalizers with hooks switched off, so a looping
/// finalizer could not be stopped by --timeout; the sandbox's setmetatable
/// refuses metatables with a `__gc` field (Lua only marks an object for
/// finalization when its metatable has `__gc` at setmetatable time).
/// Upvalue 1 is the original setmetatable.
static int wobble_setmetatable(lua_State *L) {
    if (lua_type(L, 2) == LUA_TTABLE) {
        lua_pushliteral(L, "__gc");
        if (lua_rawget(L, 2) != LUA_TNIL) {
            return luaL_error(L, "setmetatable: __gc metamethods are not available in the sandbox "
                              "(--timeout could not stop them; --allow-io lifts the sandbox)");
        }
        lua_pop(L, 1);
    }
    return wobble_call_original(L);
}

void wobble_push_setmetatable(lua_State *L) { lua_pushcclosure(L, wobble_setmetatable, 1); }

/// Why: Lua's `print` writes to stdout, which the tool may use for data;
/// this one is luaB_print writing to stderr.
/// Its upvalue says where: true stdout (the script's own output, for a
/// pipeline), false stderr (when the frames themselves go to stdout).
static int wobble_print(lua_State *L) {
    FILE *out = lua_toboolean(L, lua_upvalueindex(1)) ? stdout : stderr;
    int n = lua_gettop(L);
    for (int i = 1; i <= n; i++) {
        size_t len;
        const char *s = luaL_tolstring(L, i, &len);
        if (i > 1) fputc('\t', out);
        fwrite(s, 1, len, out);
        lua_pop(L, 1);
    }
    fputc('\n', out);
    if (fflush(out) != 0 || ferror(out)) {
        /* A print that cannot be written (a full disk, a closed pipe) stops
           the scene: a pipeline reading stdout must not be told the run
           succeeded while its data was lost. */
        int e = errno;
        clearerr(out);
        return luaL_error(L, "print: cannot write to %s (%s)", out == stdout ? "stdout" : "stderr", strerror(e));
    }
    return 0;
}

void wobble_push_print(lua_State *L, int to_stdout) {
    lua_pushboolean(L, to_stdout);
    lua_pushcclosure(L, wobble_print, 1);
}

/// Why: a warning names the script line that called an API function; the
/// host function runs at level 0, its Lua caller at level 1. lua_getinfo
/// raises no error. Returns 0 when the caller is not a Lua function.
int wobble_caller_line(lua_State *L) {
    lua_Debug ar;
    for (int level = 1; level < 8; level++) {
        if (!lua_getstack(L, level, &ar)) return 0;
        if (!lua_getinfo(L, "l", &ar)) return 0;
        if (ar.currentline > 0) return ar.currentline;
    }
    return 0;
}

wobble_handle *wobble_tohandle(lua_State *L, int idx, int32_t kind) {
    if (lua_type(L, idx) != LUA_TUSERDATA || lua_rawlen(L, idx) != sizeof(wobble_handle)) return NULL;
    wobble_handle *h = (wobble_handle *)lua_touserdata(L, idx);
    if (h == NULL || h->magic != WOBBLE_HANDLE_MAGIC) return NULL;
    if (kind != 0 && h->kind != kind) return NULL;
    return h;
}

wobble_handle *wobble_newhandle(lua_State *L, void *object, int32_t kind) {
    wobble_handle *h = (wobble_handle *)lua_newuserdatauv(L, sizeof(wobble_handle), 0);
    h->magic = WOBBLE_HANDLE_MAGIC;
    h->object = object;
    h->kind = kind;
    h->released = 0;
    return h;
}
