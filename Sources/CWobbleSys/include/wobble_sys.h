// System calls that Swift's Glibc module does not offer (DESIGN.md habit 1:
// C stays at the edge). Swift calls them only through WobbleMedia's Posix
// layer (Posix.swift), which checks every result.
#ifndef WOBBLE_SYS_H
#define WOBBLE_SYS_H

/// Why: glibc declares renameat2(2) only under _GNU_SOURCE, which Swift's
/// Glibc module does not see; RENAME_NOREPLACE and RENAME_EXCHANGE make
/// the folder commit race-free and undoable. Returns 0, or -1 with errno.
int wobble_renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned int flags);

/// Why: pipe2(2) is a GNU extension Swift's Glibc module does not see; a
/// pipe must be close-on-exec from the start, or a child spawned meanwhile
/// could inherit it (and ffmpeg would never see its input end).
int wobble_pipe_cloexec(int fds[2]);

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

#endif
