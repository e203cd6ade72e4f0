#define _GNU_SOURCE
#include "wobble_sys.h"
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
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

int wobble_memfd(const char *name) {
    return (int)syscall(SYS_memfd_create, name, (unsigned int)MFD_CLOEXEC);
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

int wobble_thread_default_stack(size_t size) {
    pthread_attr_t attr;
    int e = pthread_getattr_default_np(&attr);
    if (e != 0) return e;
    e = pthread_attr_setstacksize(&attr, size);
    if (e == 0) e = pthread_setattr_default_np(&attr);
    pthread_attr_destroy(&attr);
    return e;
}

struct wobble_stack_call {
    int (*body)(void *);
    void *context;
    int result;
};

static void *wobble_stack_trampoline(void *p) {
    struct wobble_stack_call *call = p;
    call->result = call->body(call->context);
    return NULL;
}

int wobble_run_on_stack(size_t size, int (*body)(void *), void *context, int *result) {
    pthread_attr_t attr;
    int e = pthread_attr_init(&attr);
    if (e != 0) return e;
    e = pthread_attr_setstacksize(&attr, size);
    struct wobble_stack_call call = {body, context, 0};
    pthread_t thread;
    if (e == 0) e = pthread_create(&thread, &attr, wobble_stack_trampoline, &call);
    pthread_attr_destroy(&attr);
    if (e != 0) return e;
    e = pthread_join(thread, NULL);
    if (e == 0) *result = call.result;
    return e;
}

/* 1 while the last byte written on fd 1 / fd 2 was not a newline. */
static atomic_int wobble_line_open[3];

void wobble_stream_note(int fd, const void *bytes, size_t n) {
    if (fd < 1 || fd > 2 || n == 0) return;
    atomic_store(&wobble_line_open[fd], ((const unsigned char *)bytes)[n - 1] != '\n');
}

int wobble_stream_line_open(int fd) {
    return fd >= 1 && fd <= 2 ? atomic_load(&wobble_line_open[fd]) : 0;
}

static ssize_t wobble_stream_write(void *cookie, const char *buf, size_t n) {
    int fd = (int)(intptr_t)cookie;
    size_t done = 0;
    while (done < n) {
        ssize_t w = write(fd, buf + done, n - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) break;
        done += (size_t)w;
    }
    wobble_stream_note(fd, buf, done);
    if (done == 0 && n > 0) return -1;
    return (ssize_t)done;
}

static ssize_t wobble_stream_read(void *cookie, char *buf, size_t n) {
    (void)cookie; (void)buf; (void)n;
    errno = EBADF;
    return -1;
}

static FILE *wobble_stream_open(int fd, int mode) {
    cookie_io_functions_t io = {wobble_stream_read, wobble_stream_write, NULL, NULL};
    FILE *f = fopencookie((void *)(intptr_t)fd, "w", io);
    if (f != NULL) setvbuf(f, NULL, mode, mode == _IONBF ? 0 : BUFSIZ);
    return f;
}

int wobble_track_standard_streams(void) {
    FILE *out = wobble_stream_open(1, isatty(1) ? _IOLBF : _IOFBF);
    FILE *err = wobble_stream_open(2, _IONBF);
    if (out == NULL || err == NULL) {
        if (out != NULL) fclose(out);
        if (err != NULL) fclose(err);
        return -1;
    }
    fflush(stdout);
    fflush(stderr);
    stdout = out;
    stderr = err;
    return 0;
}
