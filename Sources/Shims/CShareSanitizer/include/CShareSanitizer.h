// Tells ThreadSanitizer of hand-offs it cannot see. GLib's locks and queues (g_main_context_invoke,
// GAsyncQueue) wait on futexes of their own inside an uninstrumented library, so work handed to
// the loop thread looked unsynchronized to it. The giver calls release on an address before the
// hand-off and the taker acquire on the same address after. The hooks are weak: without
// `--sanitize=thread` they are absent and these do nothing.
#pragma once

void __tsan_acquire(void *address) __attribute__((weak));
void __tsan_release(void *address) __attribute__((weak));

static inline void CShareSanitizer_release(void *address) {
    if (__tsan_release) __tsan_release(address);
}

static inline void CShareSanitizer_acquire(void *address) {
    if (__tsan_acquire) __tsan_acquire(address);
}
