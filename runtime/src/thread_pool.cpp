#include "thread_pool.h"

#include <algorithm>

#if defined(__linux__)
#include <sched.h>
#endif

namespace kiln::rt {
namespace {

// Set on pool workers and on a dispatcher while it runs chunks: a nested
// parallel_for from there runs inline instead of deadlocking.
thread_local bool insideParallelRegion = false;

// Parallel loops in one model run come in quick succession, so threads poll
// briefly before sleeping on a condition variable: a wake-up through the
// kernel costs more than a short loop body.
constexpr int kSpinIterations = 2000;

inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

inline uint32_t generationOf(uint64_t claim) {
  return static_cast<uint32_t>(claim >> 32);
}
inline unsigned chunksOf(uint64_t claim) { return (claim >> 16) & 0xffff; }
inline unsigned nextOf(uint64_t claim) { return claim & 0xffff; }
inline uint64_t makeClaim(uint32_t generation, unsigned chunks, unsigned next) {
  return static_cast<uint64_t>(generation) << 32 |
         static_cast<uint64_t>(chunks) << 16 | next;
}

} // namespace

unsigned availableCores() {
#if defined(__linux__)
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    int count = CPU_COUNT(&set);
    if (count > 0)
      return static_cast<unsigned>(count);
  }
#endif
  return std::max(1u, std::thread::hardware_concurrency());
}

ThreadPool::ThreadPool(unsigned numThreads)
    : numThreads_(std::min(kMaxThreads, std::max(1u, numThreads))) {
  workers_.reserve(numThreads_ - 1);
  try {
    for (unsigned i = 1; i < numThreads_; ++i)
      workers_.emplace_back([this] { workerLoop(); });
  } catch (...) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (std::thread &worker : workers_)
      worker.join();
    throw;
  }
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread &worker : workers_)
    worker.join();
}

void ThreadPool::runChunks(uint32_t generation) {
  uint64_t claim = claim_.load(std::memory_order_acquire);
  for (;;) {
    if (generationOf(claim) != generation || nextOf(claim) >= chunksOf(claim))
      return;
    // On failure `claim` is reloaded and the loop re-checks it.
    if (!claim_.compare_exchange_weak(claim, claim + 1,
                                      std::memory_order_acquire))
      continue;
    // Chunk i is [i*base + min(i, extra), ...): the first `extra` chunks get
    // one more element. No products of n, so no overflow for any int64 n.
    int64_t index = nextOf(claim);
    int64_t base = jobSize_ / jobChunks_, extra = jobSize_ % jobChunks_;
    int64_t begin = index * base + std::min(index, extra);
    int64_t end = begin + base + (index < extra ? 1 : 0);
    jobBody_(jobContext_, begin, end);
    if (unfinished_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      std::lock_guard<std::mutex> lock(mutex_);
      done_.notify_one();
    }
    claim = claim_.load(std::memory_order_acquire);
  }
}

void ThreadPool::workerLoop() {
  insideParallelRegion = true;
  uint32_t seen = 0;
  for (;;) {
    uint32_t current = generationOf(claim_.load(std::memory_order_acquire));
    for (int i = 0; i < kSpinIterations && current == seen; ++i) {
      cpuRelax();
      current = generationOf(claim_.load(std::memory_order_acquire));
    }
    if (current == seen) {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] {
        return stopping_ ||
               generationOf(claim_.load(std::memory_order_acquire)) != seen;
      });
      if (stopping_)
        return;
      current = generationOf(claim_.load(std::memory_order_acquire));
    }
    seen = current;
    runChunks(current);
  }
}

void ThreadPool::waitForChunks() {
  for (int i = 0; i < kSpinIterations; ++i) {
    if (unfinished_.load(std::memory_order_acquire) == 0)
      return;
    cpuRelax();
  }
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock,
             [&] { return unfinished_.load(std::memory_order_acquire) == 0; });
}

void ThreadPool::parallelFor(int64_t n, kiln_parallel_body body, void *ctx) {
  if (n <= 0 || !body)
    return;
  unsigned chunks = static_cast<unsigned>(std::min<int64_t>(n, numThreads_));
  if (chunks <= 1 || insideParallelRegion) {
    body(ctx, 0, n);
    return;
  }
  std::lock_guard<std::mutex> dispatch(dispatchMutex_);
  // Every chunk of the previous job has finished (waitForChunks), so no
  // thread reads these fields now.
  jobSize_ = n;
  jobChunks_ = chunks;
  jobBody_ = body;
  jobContext_ = ctx;
  unfinished_.store(chunks, std::memory_order_relaxed);
  uint32_t generation =
      generationOf(claim_.load(std::memory_order_relaxed)) + 1;
  {
    // Under the mutex so a worker about to sleep cannot miss the new job.
    std::lock_guard<std::mutex> lock(mutex_);
    claim_.store(makeClaim(generation, chunks, 0), std::memory_order_release);
  }
  wake_.notify_all();
  insideParallelRegion = true;
  runChunks(generation);
  insideParallelRegion = false;
  waitForChunks();
}

void ThreadPool::parallelForCallback(void *pool, int64_t n,
                                     kiln_parallel_body body, void *ctx) {
  static_cast<ThreadPool *>(pool)->parallelFor(n, body, ctx);
}

} // namespace kiln::rt
