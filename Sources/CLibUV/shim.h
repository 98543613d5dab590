#ifndef TERN_CLIBUV_SHIM_H
#define TERN_CLIBUV_SHIM_H
#include <uv.h>

/// libuv's handle "inheritance" is C struct-prefix casting; Swift needs it spelled out.
static inline uv_handle_t *tern_uv_async_as_handle(uv_async_t *async) {
    return (uv_handle_t *)async;
}
static inline uv_handle_t *tern_uv_timer_as_handle(uv_timer_t *timer) {
    return (uv_handle_t *)timer;
}
static inline uv_handle_t *tern_uv_signal_as_handle(uv_signal_t *signal) {
    return (uv_handle_t *)signal;
}

#ifdef __linux__
#include <sys/syscall.h>
#include <unistd.h>
/// The calling thread's own ID, which `uv_os_setpriority` takes to set one thread's nice value
/// (libuv before 1.48 has no thread priority of its own).
static inline uv_pid_t tern_current_thread_id(void) {
    return (uv_pid_t)syscall(SYS_gettid);
}
#endif
#endif
