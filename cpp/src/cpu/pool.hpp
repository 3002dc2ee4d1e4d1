// cpu/pool.hpp — the CPU backend's persistent worker threads, shared by every parallel_for of the process.
// Contract: run_on_pool runs job(ctx, k) once on each of helpers k = 1..h and returns h (0: no pool free); never blocks on another caller.
#pragma once

namespace vpoc::cpu {

// A type-erased job: called as job(ctx, k) on helper k. It must not throw (parallel_for's catches all).
using PoolJob = void (*)(void* ctx, int helper);

// Claims a free pool (a try-lock: never waits for another caller), grows it to `helpers` threads
// (fewer where the process's budget of pooled threads, pooled_thread_budget() in parallel.hpp, is
// spent, or where a thread cannot be started), runs job(ctx, k) on helpers k = 1..h while the
// caller runs own(ctx, h) (its share: worker 0, and any workers beyond h), then waits until every helper has finished or was never
// needed: a helper still asleep when `own` returns is taken back without running (its share was
// done by the others, as with any dynamic schedule). Returns h; 0 means no pool could be used (all
// taken by other callers, or none could start a thread) and neither job nor own ran.
// Pools are process-wide, never destroyed (threads detached, asleep on a condition variable, all
// signals blocked); a forked child drops the parent's pools (pthread_atfork) and starts new ones.
int run_on_pool(int helpers, PoolJob job, PoolJob own, void* ctx) noexcept;

}  // namespace vpoc::cpu
