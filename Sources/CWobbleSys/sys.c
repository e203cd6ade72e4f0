#define _GNU_SOURCE
#include "wobble_sys.h"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

int wobble_renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned int flags) {
    return (int)syscall(SYS_renameat2, olddirfd, oldpath, newdirfd, newpath, flags);
}

int wobble_pipe_cloexec(int fds[2]) {
    return pipe2(fds, O_CLOEXEC);
}

int wobble_spawn(const char *path, char *const argv[], char *const envp[], int in, int out, int err, int extra) {
    int report[2];
    if (pipe2(report, O_CLOEXEC) != 0) return -1;
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(report[0]);
        close(report[1]);
        errno = e;
        return -1;
    }
    if (pid == 0) {
        // The child: async-signal-safe calls only.
        sigset_t none;
        sigemptyset(&none);
        struct sigaction dfl;
        dfl.sa_handler = SIG_DFL;
        dfl.sa_flags = 0;
        sigemptyset(&dfl.sa_mask);
        for (int s = 1; s < NSIG; s++) {
            if (s != SIGKILL && s != SIGSTOP) sigaction(s, &dfl, NULL);
        }
        sigprocmask(SIG_SETMASK, &none, NULL);
        setpgid(0, 0);
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(127);
        // Move the three sources above 2 first, so no dup2 clobbers another.
        int src[4] = {in, out, err, extra};
        int count = extra >= 0 ? 4 : 3;
        for (int i = 0; i < count; i++) {
            src[i] = fcntl(src[i], F_DUPFD, 10);
            if (src[i] < 0) goto fail;
        }
        for (int i = 0; i < count; i++) {
            if (dup2(src[i], i) < 0) goto fail;
        }
        // Everything else closed (the report pipe is close-on-exec).
        long max = sysconf(_SC_OPEN_MAX);
        if (max < 0 || max > 65536) max = 65536;
        if (syscall(SYS_close_range, count, ~0U, 4 /* CLOSE_RANGE_CLOEXEC */) != 0) {
            for (int fd = count; fd < max; fd++) {
                if (fd != report[1]) close(fd);
            }
        }
        execve(path, argv, envp);
    fail:;
        int e = errno;
        ssize_t unused = write(report[1], &e, sizeof e);
        (void)unused;
        _exit(127);
    }
    close(report[1]);
    int e = 0;
    ssize_t n;
    do { n = read(report[0], &e, sizeof e); } while (n < 0 && errno == EINTR);
    close(report[0]);
    if (n == (ssize_t)sizeof e) {
        int status;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
        errno = e;
        return -1;
    }
    return pid;
}

static volatile sig_atomic_t wobble_signal_first = 0;
static int wobble_signal_pipe[2] = {-1, -1};

static void wobble_signal_handler(int sig) {
    int saved = errno;
    if (wobble_signal_first == 0) wobble_signal_first = sig;
    unsigned char b = (unsigned char)sig;
    if (wobble_signal_pipe[1] >= 0) {
        ssize_t unused = write(wobble_signal_pipe[1], &b, 1);
        (void)unused;
    }
    errno = saved;
}

int wobble_signal_catch(int sig) {
    if (wobble_signal_pipe[0] < 0 && pipe2(wobble_signal_pipe, O_CLOEXEC | O_NONBLOCK) != 0) return -1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = wobble_signal_handler;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    return sigaction(sig, &sa, NULL);
}

int wobble_signal_received(void) {
    return wobble_signal_first;
}

int wobble_signal_fd(void) {
    return wobble_signal_pipe[0];
}
