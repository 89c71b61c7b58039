#ifndef SPOOR_MALLOC_COUNTER_H
#define SPOOR_MALLOC_COUNTER_H

/// Allocations (malloc, calloc, realloc, posix_memalign, aligned_alloc) made by the calling thread so far.
unsigned long long spoor_thread_malloc_count(void);

#endif
