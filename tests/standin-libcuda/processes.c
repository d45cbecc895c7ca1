/* A program that uses libcuda.so.1 as real processes do, for tests/tests/standin_processes.rs:
 * it loads the library by its name (the loader's search: LD_LIBRARY_PATH names the stand-in's
 * folder first) and calls cuDriverGetVersion from forked children, signal handlers, a handler
 * that interrupted malloc, after a dlclose, and so on. Each mode prints one result line the
 * test reads. Built by the test with `cc`. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef int (*version_fn)(int *);
typedef int (*lookup_v2_fn)(const char *, void **, int, uint64_t, int *);
typedef int (*lookup_v1_fn)(const char *, void **, int, uint64_t);

static version_fn version;
static volatile sig_atomic_t handler_calls, handler_failures, first_in_handler;
static volatile int stop;

static void *load(void) {
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (!h) {
        printf("no libcuda.so.1: %s\n", dlerror());
        exit(2);
    }
    version = (version_fn)dlsym(h, "cuDriverGetVersion");
    if (!version) {
        printf("no cuDriverGetVersion\n");
        exit(2);
    }
    return h;
}

static int call_once(void) {
    int v = 0;
    int r = version(&v);
    return r == 0 && v > 0 ? v : -r - 1;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

/* Waits for `pid` at most `seconds`; kills it after. 0: exited 0; 1: failed; 2: hung. */
static int wait_child(pid_t pid, double seconds) {
    double end = now() + seconds;
    for (;;) {
        int st;
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid) return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
        if (r < 0 && errno != EINTR) return 1;
        if (now() > end) {
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            return 2;
        }
        usleep(200);
    }
}

static void *caller(void *arg) {
    (void)arg;
    while (!stop) call_once();
    return NULL;
}

/* One thread calls in a loop while the main thread forks `n` times; each child calls once. */
static int mode_fork(int n) {
    load();
    call_once();
    pthread_t t;
    pthread_create(&t, NULL, caller, NULL);
    int hung = 0, failed = 0;
    for (int i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid == 0) _exit(call_once() > 0 ? 0 : 1);
        printf("child %d\n", (int)pid);
        int r = wait_child(pid, 10);
        hung += r == 2;
        failed += r == 1;
    }
    stop = 1;
    pthread_join(t, NULL);
    printf("fork: %d children, %d hung, %d failed\n", n, hung, failed);
    return 0;
}

static void call_in_handler(int sig) {
    (void)sig;
    int saved = errno;
    if (call_once() > 0) handler_calls++;
    else handler_failures++;
    errno = saved;
}

static void *watchdog(void *arg) {
    double seconds = *(double *)arg;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    double end = now() + seconds;
    while (now() < end) usleep(10000);
    printf("hung: handler calls %d\n", (int)handler_calls);
    fflush(stdout);
    _exit(3);
}

static void start_watchdog(double seconds) {
    static double s;
    s = seconds;
    pthread_t w;
    pthread_create(&w, NULL, watchdog, &s);
}

static void timer_every(long usec) {
    struct itimerval it = {{0, usec}, {0, usec}};
    setitimer(ITIMER_REAL, &it, NULL);
}

/* A handler that calls the driver every `usec` while the main thread calls in a loop. */
static int mode_signals(long usec, double seconds) {
    load();
    start_watchdog(seconds + 20);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = call_in_handler;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    timer_every(usec);
    double end = now() + seconds;
    long main_calls = 0;
    while (now() < end) main_calls += call_once() > 0;
    timer_every(0);
    printf("signals: handler calls %d, handler failures %d, main calls %ld\n", (int)handler_calls,
           (int)handler_failures, main_calls);
    return 0;
}

/* In a child: a signal every 20 us from before the process's first call; the first calls are
 * made with the handler calling too. `malloc`: the first call of all is made in a handler
 * that interrupted malloc (the main thread does nothing but malloc and free). */
static void first_call_child(int in_malloc) {
    load();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = call_in_handler;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    timer_every(20);
    if (in_malloc) {
        double end = now() + 0.05;
        while (handler_calls + handler_failures < 3 && now() < end) {
            void *volatile p = malloc(1000 + (rand() & 4095));
            free(p);
        }
    } else {
        for (int i = 0; i < 50; i++)
            if (call_once() <= 0) _exit(1);
    }
    timer_every(0);
    _exit(handler_failures == 0 ? 0 : 1);
}

static int mode_first_call(int n, int in_malloc) {
    int hung = 0, failed = 0;
    for (int i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid == 0) first_call_child(in_malloc);
        int r = wait_child(pid, 10);
        hung += r == 2;
        failed += r == 1;
    }
    printf("first-call%s: %d processes, %d hung, %d failed\n", in_malloc ? "-in-malloc" : "", n, hung, failed);
    return 0;
}

/* dlopen, call, dlclose, dlopen again: the stand-in (its mark) both times? */
static int mode_reload(void) {
    void *h = load();
    int first = dlsym(h, "cuda_sys_gen_standin") != NULL;
    int v1 = call_once();
    dlclose(h);
    h = load();
    int second = dlsym(h, "cuda_sys_gen_standin") != NULL;
    int v2 = call_once();
    printf("reload: first %s %d, second %s %d\n", first ? "stand-in" : "real", v1, second ? "stand-in" : "real", v2);
    return 0;
}

/* The driver's version through the library the loader found, after the program changed
 * LD_LIBRARY_PATH where asked (the loader keeps the value the process started with). */
static int mode_version(const char *set_path) {
    if (set_path) setenv("LD_LIBRARY_PATH", set_path, 1);
    load();
    printf("version: %d\n", call_once());
    return 0;
}

/* Requests at negative versions through both lookups, where the library has them. */
static int mode_negative(void) {
    void *h = load();
    lookup_v2_fn v2 = (lookup_v2_fn)dlsym(h, "cuGetProcAddress_v2");
    lookup_v1_fn v1 = (lookup_v1_fn)dlsym(h, "cuGetProcAddress");
    const char *symbols[] = {"cuCtxCreate", "cuMemAlloc", "cuMemcpy", "cuStreamGetCaptureInfo", "cuDriverGetVersion"};
    int versions[] = {-1, -2, -1000, INT32_MIN};
    int answered = 0;
    for (int s = 0; s < 5; s++)
        for (int i = 0; i < 4; i++)
            for (int f = 0; f < 3; f++) {
                void *p = NULL;
                int st = -1;
                if (v2 && v2(symbols[s], &p, versions[i], f, &st) == 0 && p) answered++;
                p = NULL;
                if (v1 && v1(symbols[s], &p, versions[i], f) == 0 && p) answered++;
            }
    printf("negative: %d answered\n", answered);
    return 0;
}

/* One request through cuGetProcAddress_v2: `ask SYMBOL VERSION FLAGS`. */
static int mode_ask(const char *symbol, int v, uint64_t flags) {
    void *h = load();
    lookup_v2_fn v2 = (lookup_v2_fn)dlsym(h, "cuGetProcAddress_v2");
    if (!v2) {
        printf("ask: no cuGetProcAddress_v2\n");
        return 0;
    }
    void *p = NULL;
    int st = -1;
    int r = v2(symbol, &p, v, flags, &st);
    printf("ask: %s %d flags %llu -> result %d status %d %s\n", symbol, v, (unsigned long long)flags, r, st,
           p ? "function" : "NULL");
    return 0;
}

/* Both ABIs of cuMemAlloc by their exported names: `cuMemAlloc` (2000, a 32-bit pointer) and
 * `cuMemAlloc_v2` (3020). */
static int mode_mem_alloc(void) {
    void *h = load();
    int (*v1)(unsigned int *, unsigned int) = (int (*)(unsigned int *, unsigned int))dlsym(h, "cuMemAlloc");
    int (*v2)(unsigned long long *, size_t) = (int (*)(unsigned long long *, size_t))dlsym(h, "cuMemAlloc_v2");
    unsigned int p1 = 0;
    unsigned long long p2 = 0;
    int r1 = v1 ? v1(&p1, 16) : -1;
    int r2 = v2 ? v2(&p2, 16) : -1;
    printf("mem-alloc: cuMemAlloc %d %u, cuMemAlloc_v2 %d %llu\n", r1, p1, r2, p2);
    return 0;
}

/* Many calls, for a trace written to a pipe whose reader leaves. */
static int mode_calls(int n) {
    load();
    int ok = 0;
    for (int i = 0; i < n; i++) ok += call_once() > 0;
    fprintf(stderr, "calls: %d of %d\n", ok, n);
    return 0;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "";
    int n = argc > 2 ? atoi(argv[2]) : 200;
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (!strcmp(mode, "fork")) return mode_fork(n);
    if (!strcmp(mode, "signals")) return mode_signals(200, 0.5);
    if (!strcmp(mode, "first-call")) return mode_first_call(n, 0);
    if (!strcmp(mode, "first-call-in-malloc")) return mode_first_call(n, 1);
    if (!strcmp(mode, "reload")) return mode_reload();
    if (!strcmp(mode, "version")) return mode_version(argc > 2 ? argv[2] : NULL);
    if (!strcmp(mode, "negative")) return mode_negative();
    if (!strcmp(mode, "calls")) return mode_calls(n);
    if (!strcmp(mode, "mem-alloc")) return mode_mem_alloc();
    if (!strcmp(mode, "ask") && argc > 4) return mode_ask(argv[2], atoi(argv[3]), strtoull(argv[4], NULL, 10));
    fprintf(stderr, "usage: processes fork|signals|first-call|first-call-in-malloc|reload|version [PATH]|negative|calls [N]|ask SYMBOL VERSION FLAGS|mem-alloc\n");
    return 2;
}
