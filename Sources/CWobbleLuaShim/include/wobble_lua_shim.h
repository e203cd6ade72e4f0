// The only hand-written C of wobble-run (C stays at the edge; no longjmp through Swift).
//
// Lua reports errors with longjmp. A longjmp must never unwind Swift frames,
// so Swift host functions never raise: they return WOBBLE_RAISE with the
// message pushed, and the C trampoline below raises after Swift returned.
// Lua's function-like macros do not import into Swift; the static inline
// functions at the end of this header stand in for them.
#ifndef WOBBLE_LUA_SHIM_H
#define WOBBLE_LUA_SHIM_H

#include <stddef.h>
#include <stdint.h>
#include <lua.h>
#include <lauxlib.h>
#include <lualib.h>

/// Returned by a Swift host function instead of a result count when it
/// failed; the error message is on top of the stack.
#define WOBBLE_RAISE (-1)

/// Why the count hook stopped the script (wobble_stop_reason).
#define WOBBLE_STOP_NONE 0
#define WOBBLE_STOP_TIMEOUT 1
#define WOBBLE_STOP_INTERRUPTED 2

/// Kinds of handle userdata (wobble_handle.kind).
#define WOBBLE_HANDLE_SKETCH 1
#define WOBBLE_HANDLE_WOBBLE 2
#define WOBBLE_HANDLE_SOUND 3

/// Checked by wobble_tohandle so that no other userdata is read as a handle.
#define WOBBLE_HANDLE_MAGIC UINT64_C(0x776f62626c652121)

/// The Swift side of every host function: `index` picks the Swift function
/// from the host's registration table. Returns the number of results, or
/// WOBBLE_RAISE with the message on top of the stack. Must not raise.
typedef int (*wobble_dispatch_fn)(lua_State *L, void *ctx, lua_Integer index);

/// Polled by the count hook; returns non-zero to interrupt the script.
/// Must not call Lua.
typedef int (*wobble_abort_fn)(void *ctx);

/// The memory of a handle userdata (a sketch or wobble model of the scene).
/// Why: the userdata carries a retained Swift object; `__gc` releases it.
typedef struct wobble_handle {
    uint64_t magic;     ///< WOBBLE_HANDLE_MAGIC
    void *object;       ///< Unmanaged, retained Swift object
    int32_t kind;       ///< WOBBLE_HANDLE_SKETCH, _WOBBLE or _SOUND
    int32_t released;   ///< set once `__gc` released `object`
} wobble_handle;

/// Why: a state whose allocator enforces `limit_bytes` of Lua memory and
/// never returns NULL while a Swift host function runs (see shim.c).
/// Returns NULL when the state cannot be created.
lua_State *wobble_newstate(size_t limit_bytes);

/// Why: lua_close plus freeing the allocator's bookkeeping, in that order.
void wobble_close(lua_State *L);

/// Why: connects the trampoline and the count hook to the Swift host
/// (`ctx` is passed back unretained).
void wobble_set_host(lua_State *L, void *ctx, wobble_dispatch_fn dispatch, wobble_abort_fn should_abort);

/// Why: installs the count hook (timeout and interruption) on `L`; threads
/// created later copy it (lua_newthread does in 5.4). `seconds <= 0`: no
/// timeout, only the abort callback is polled. The clock starts now.
void wobble_install_hook(lua_State *L, double seconds);

/// Why: Swift tells a timeout or interruption apart from other errors.
int wobble_stop_reason(lua_State *L);

/// Why: bytes of Lua memory in use (tests, diagnostics).
size_t wobble_memory_used(lua_State *L);

/// Why: pushes a C closure that calls Swift host function `index` through
/// the trampoline (the only way Swift functions become Lua functions).
void wobble_push_hostfunction(lua_State *L, lua_Integer index);

/// Why: lua_pcall with a message handler that keeps the traceback; on error
/// the message is on top and the traceback is retrievable once with
/// wobble_take_traceback. Never raises.
int wobble_pcall_traceback(lua_State *L, int nargs, int nresults);

/// Why: pushes the traceback saved by the last failed
/// wobble_pcall_traceback (or nil) and forgets it.
void wobble_take_traceback(lua_State *L);

/// Why: pushes `load` restricted to text chunks; the original `load` must
/// be on top of the stack (it becomes the closure's upvalue).
void wobble_push_textload(lua_State *L);

/// Why: pushes an `xpcall` whose message handler is skipped once the script
/// is stopped (timeout, interruption); the original `xpcall` must be on top.
void wobble_push_xpcall(lua_State *L);

/// Why: pushes the sandbox's `setmetatable`, which refuses `__gc`; the
/// original `setmetatable` must be on top.
void wobble_push_setmetatable(lua_State *L);

/// Why: pushes a `print` that writes to stdout (`to_stdout` true) or to
/// stderr (stdout may carry the output itself).
void wobble_push_print(lua_State *L, int to_stdout);

/// Why: the script line that called the running host function (0: none).
int wobble_caller_line(lua_State *L);

/// Why: reads a handle userdata without raising: NULL unless the value at
/// `idx` is a wobble_handle of `kind` (0: either kind).
wobble_handle *wobble_tohandle(lua_State *L, int idx, int32_t kind);

/// Why: creates a handle userdata (no metatable yet) and pushes it.
/// It may raise only on memory errors, which the allocator rules out
/// inside host functions.
wobble_handle *wobble_newhandle(lua_State *L, void *object, int32_t kind);

// MARK: Lua's macros as functions (Swift does not import function-like macros)

/// lua_pop
static inline void wobble_pop(lua_State *L, int n) { lua_settop(L, -(n) - 1); }
/// lua_newtable / lua_createtable
static inline void wobble_newtable(lua_State *L, int narr, int nrec) { lua_createtable(L, narr, nrec); }
/// lua_pcall (no continuation)
static inline int wobble_pcall(lua_State *L, int nargs, int nresults, int msgh) {
    return lua_pcallk(L, nargs, nresults, msgh, 0, NULL);
}
/// lua_tonumber with an isnum flag
static inline lua_Number wobble_tonumberx(lua_State *L, int idx, int *isnum) { return lua_tonumberx(L, idx, isnum); }
/// lua_tointeger with an isnum flag
static inline lua_Integer wobble_tointegerx(lua_State *L, int idx, int *isnum) { return lua_tointegerx(L, idx, isnum); }
/// lua_upvalueindex
static inline int wobble_upvalueindex(int i) { return lua_upvalueindex(i); }
/// LUA_REGISTRYINDEX
static inline int wobble_registryindex(void) { return LUA_REGISTRYINDEX; }
/// lua_pushcfunction
static inline void wobble_pushcfunction(lua_State *L, lua_CFunction f) { lua_pushcclosure(L, f, 0); }
/// lua_insert
static inline void wobble_insert(lua_State *L, int idx) { lua_rotate(L, idx, 1); }
/// lua_remove
static inline void wobble_remove(lua_State *L, int idx) { lua_rotate(L, idx, -1); lua_settop(L, -2); }
/// lua_replace
static inline void wobble_replace(lua_State *L, int idx) { lua_copy(L, -1, idx); lua_settop(L, -2); }
/// lua_pushglobaltable
static inline void wobble_pushglobaltable(lua_State *L) { lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_GLOBALS); }
/// lua_newuserdata with no user values
static inline void *wobble_newuserdata(lua_State *L, size_t size) { return lua_newuserdatauv(L, size, 0); }
/// lua_isinteger is a function; lua_isnoneornil is a macro
static inline int wobble_isnoneornil(lua_State *L, int idx) { return lua_type(L, idx) <= 0; }

#endif
