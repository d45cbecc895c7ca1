/* A driver-API program that receives SIGALRM every millisecond (setitimer) while it calls the
 * driver in a loop for 3 seconds (allocations and copies in a context); the handler calls
 * cuDriverGetVersion and cuCtxGetCurrent. Prints how many calls each side made and whether the
 * copies came back equal. Built on the GPU machine: gcc -O2 timer.c -lcuda (the toolkit's stub). */
#include <cuda.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

static volatile sig_atomic_t in_handler, handler_failures;

static void on_timer(int sig) {
    (void)sig;
    int v = 0;
    CUcontext c = 0;
    if (cuDriverGetVersion(&v) != CUDA_SUCCESS || v <= 0 || cuCtxGetCurrent(&c) != CUDA_SUCCESS) handler_failures++;
    in_handler++;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

int main(void) {
    CUdevice dev;
    CUcontext ctx;
    if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx)) { printf("no context\n"); return 1; }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_timer;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = {{0, 1000}, {0, 1000}};
    setitimer(ITIMER_REAL, &it, NULL);
    static unsigned char host[1 << 20], back[1 << 20];
    long loops = 0, bad = 0;
    double end = now() + 3;
    while (now() < end) {
        CUdeviceptr d;
        memset(host, (int)(loops & 0xff), sizeof host);
        if (cuMemAlloc(&d, sizeof host) || cuMemcpyHtoD(d, host, sizeof host) || cuMemcpyDtoH(back, d, sizeof back) || cuMemFree(d)) bad++;
        else if (memcmp(host, back, sizeof host)) bad++;
        loops++;
    }
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    printf("timer: %ld loops, %ld bad; handler calls %d, handler failures %d\n", loops, bad, (int)in_handler, (int)handler_failures);
    cuDevicePrimaryCtxRelease(dev);
    return bad || handler_failures || in_handler < 1000;
}
