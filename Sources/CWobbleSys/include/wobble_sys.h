// System calls that Swift's Glibc module does not offer, and the one signal
// handler (a signal handler must be async-signal-safe, which Swift code
// cannot promise). C stays at this edge: Swift calls these only through
// WobbleSystem (Posix.swift, ChildProcess.swift, Signals.swift), which
// checks every result.
#ifndef WOBBLE_SYS_H
#define WOBBLE_SYS_H

#include <stddef.h>

/// Why: glibc declares renameat2(2) only under _GNU_SOURCE, which Swift's
/// Glibc module does not see; RENAME_NOREPLACE and RENAME_EXCHANGE make
/// the folder commit race-free and undoable. Returns 0, or -1 with errno.
int wobble_renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned int flags);

/// Why: pipe2(2) is a GNU extension Swift's Glibc module does not see; a
/// pipe must be close-on-exec from the start, or a child spawned meanwhile
/// could inherit it (and ffmpeg would never see its input end).
int wobble_pipe_cloexec(int fds[2]);

/// Why: memfd_create(2) is declared only under _GNU_SOURCE, which Swift's
/// Glibc module does not see. An anonymous file in memory, close-on-exec:
/// a seekable place for ffmpeg's container when the output is memory, with
/// no file on any disk to leave behind. Returns the descriptor, or -1 with
/// errno.
int wobble_memfd(const char *name);

/// Why: a child must die with us (ffmpeg left running after a SIGKILL
/// would keep writing), which needs prctl(PR_SET_PDEATHSIG) between fork
/// and exec; posix_spawn and Foundation's Process cannot do that.
///
/// Starts `path` with `argv` and `envp` (NULL-terminated) in its own
/// process group, with `in`, `out`, `err` as its descriptors 0, 1, 2,
/// `extra` (unless -1) as its descriptor 3, every other descriptor closed, default signal handling and an empty
/// signal mask, and SIGKILL sent to it when the calling thread exits.
/// Only async-signal-safe calls run in the child. Returns the child's pid,
/// or -1 with errno (also the errno of a failed exec).
int wobble_spawn(const char *path, char *const argv[], char *const envp[], int in, int out, int err, int extra);

/// Why: a signal handler may only make async-signal-safe calls, which
/// Swift cannot promise; Dispatch signal sources need threads (under a
/// pids limit none can be created, and the signal is never seen).
///
/// Catches `sig` with sigaction (SA_RESTART): the handler records the
/// first signal caught (`wobble_signal_received`) and writes the signal
/// number as one byte into a non-blocking, close-on-exec self-pipe
/// (`wobble_signal_fd`, created on the first call). Returns 0, or -1 with
/// errno.
int wobble_signal_catch(int sig);

/// The first signal `wobble_signal_catch`'s handler caught, or 0.
int wobble_signal_received(void);

/// The read end of the self-pipe (-1 before the first catch): readable
/// once a caught signal arrived.
int wobble_signal_fd(void);

/// Why: glibc gives every thread a stack the size of the stack limit
/// (`ulimit -s`) read at start-up, and a limit of 32 KiB crashes Lua's C
/// calls, Mesa's shader compiler and the encoder threads (SIGSEGV);
/// pthread_setattr_default_np is a GNU extension Swift's Glibc module does
/// not see. Sets the stack size of threads started from now on to `size`
/// bytes. Returns 0, or an error number.
int wobble_thread_default_stack(size_t size);

/// Why: the main thread's stack cannot grow past a hard stack limit; a
/// thread's stack is mapped memory of any size. Runs `body(context)` on a
/// new thread with a stack of `size` bytes and waits for it; its result is
/// stored in `*result`. Returns 0, or an error number (no thread started).
int wobble_run_on_stack(size_t size, int (*body)(void *), void *context, int *result);

/// Why: a scene's `io.write("x")` (with --allow-io) goes through the C
/// library's stdout, and the --json object and the tool's messages must
/// still start on a line of their own. Replaces glibc's `stdout` and
/// `stderr` (assignable variables in glibc) with streams on the same
/// descriptors (fopencookie, same buffering) that remember whether the
/// last byte written ended a line; call it before anything is written or
/// a Lua state is opened. Returns 0, or -1.
int wobble_track_standard_streams(void);

/// Whether the last byte written on descriptor `fd` (1 or 2) through the C
/// library or noted with `wobble_stream_note` left a line open (1) or not (0).
int wobble_stream_line_open(int fd);

/// Notes `n` bytes written on descriptor `fd` (1 or 2) directly.
void wobble_stream_note(int fd, const void *bytes, size_t n);

#endif
