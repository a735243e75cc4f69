#ifndef KAKAPO_CHEAP_SHIM_H
#define KAKAPO_CHEAP_SHIM_H

// What the C allocator holds, and giving its free pages back (glibc; elsewhere nothing to do).

#include <stddef.h>
#if defined(__linux__)
#include <features.h>
#endif

#if defined(__GLIBC__)
#include <malloc.h>

/// Bytes the allocator holds free in all its arenas, and bytes in use: {free, used}.
static inline void kakapo_heap_usage(size_t *free_bytes, size_t *used_bytes) {
#if __GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33)
    struct mallinfo2 info = mallinfo2();
    *free_bytes = info.fordblks;
    *used_bytes = info.uordblks;
#else
    // Before glibc 2.33 only mallinfo, whose int fields wrap past 4 GiB: read as unsigned, right below that.
    struct mallinfo info = mallinfo();
    *free_bytes = (size_t)(unsigned int)info.fordblks;
    *used_bytes = (size_t)(unsigned int)info.uordblks;
#endif
}

/// Gives the free pages of every arena back to the system.
static inline void kakapo_heap_trim(void) { malloc_trim(0); }
#else
static inline void kakapo_heap_usage(size_t *free_bytes, size_t *used_bytes) {
    *free_bytes = 0;
    *used_bytes = 0;
}

static inline void kakapo_heap_trim(void) {}
#endif

#endif
