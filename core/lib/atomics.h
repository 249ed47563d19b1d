/*
 * Atomic operations on plain integers shared between processes or threads.
 *
 * The compiler's __atomic builtins where it has them (GCC 4.7 and later, clang), else
 * the older __sync builtins (GCC 4.1 and later): NetBSD 6's own compiler is GCC 4.5.
 * The __sync forms are full barriers, so there every operation is at least as ordered as
 * asked, never less.  C11's <stdatomic.h> would need GCC 4.9.
 */
#ifndef OSMETER_LIB_ATOMICS_H
#define OSMETER_LIB_ATOMICS_H

#if defined(__ATOMIC_ACQUIRE)

#define om_load(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define om_load_relaxed(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define om_store(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define om_store_relaxed(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define om_add(p, v) __atomic_add_fetch((p), (v), __ATOMIC_ACQ_REL)
#define om_add_relaxed(p, v) __atomic_add_fetch((p), (v), __ATOMIC_RELAXED)
#define om_exchange(p, v) __atomic_exchange_n((p), (v), __ATOMIC_ACQ_REL)
/* Sets *p to desired if it holds *expected (true); else stores what it holds in
 * *expected (false). */
#define om_cas(p, expected, desired)                                                       \
    __atomic_compare_exchange_n((p), (expected), (desired), 0, __ATOMIC_ACQ_REL,           \
                                __ATOMIC_ACQUIRE)

#else /* __sync: full barriers */

#define om_load(p)                                                                         \
    __extension__({                                                                        \
        __typeof__(*(p)) om_v_ = *(volatile __typeof__(*(p)) *)(p);                        \
        __sync_synchronize();                                                              \
        om_v_;                                                                             \
    })
#define om_load_relaxed(p) om_load(p)
#define om_store(p, v)                                                                     \
    do {                                                                                   \
        __sync_synchronize();                                                              \
        *(volatile __typeof__(*(p)) *)(p) = (v);                                           \
        __sync_synchronize();                                                              \
    } while (0)
#define om_store_relaxed(p, v) om_store(p, v)
#define om_add(p, v) __sync_add_and_fetch((p), (v))
#define om_add_relaxed(p, v) __sync_add_and_fetch((p), (v))
/* __sync_lock_test_and_set is only an acquire barrier: a full one goes before it. */
#define om_exchange(p, v) (__sync_synchronize(), __sync_lock_test_and_set((p), (v)))
#define om_cas(p, expected, desired)                                                       \
    __extension__({                                                                        \
        __typeof__(*(p)) om_e_ = *(expected);                                              \
        __typeof__(*(p)) om_o_ = __sync_val_compare_and_swap((p), om_e_, (desired));       \
        if (om_o_ != om_e_)                                                                \
            *(expected) = om_o_;                                                           \
        om_o_ == om_e_;                                                                    \
    })

#endif
#endif
