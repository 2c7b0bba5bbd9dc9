//! CPU time of work on this thread, for complexity tests that compare costs at n and 4n
//! (ratios, never wall-clock limits).

/// Runs of each measurement; the least is kept.
pub const RUNS: usize = 3;

/// CPU time this thread has run, in nanoseconds: `clock_gettime(CLOCK_THREAD_CPUTIME_ID)`
/// (exact; `/proc/thread-self/schedstat` is only updated at scheduler ticks).
pub fn thread_cpu_ns() -> u64 {
    #[repr(C)]
    struct Timespec {
        tv_sec: i64,
        tv_nsec: i64,
    }
    extern "C" {
        fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
    }
    const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
    let mut ts = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid clock id and a pointer to a live, writable timespec.
    let rc = unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The least CPU time of [`RUNS`] runs of `work`.
pub fn cost(work: &dyn Fn()) -> u64 {
    (0..RUNS)
        .map(|_| {
            let before = thread_cpu_ns();
            work();
            thread_cpu_ns() - before
        })
        .min()
        .unwrap()
        .max(1)
}
