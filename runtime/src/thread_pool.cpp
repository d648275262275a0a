#include "thread_pool.h"

#include <algorithm>

#if defined(__linux__)
#include <sched.h>
#endif

namespace kiln::rt {
namespace {

// Set on pool workers and on a dispatcher while it runs its own chunk: a
// nested parallel_for from there runs inline instead of deadlocking.
thread_local bool insideParallelRegion = false;

// Parallel loops in one model run come in quick succession, so workers poll
// briefly before sleeping on the condition variable: a wake-up through the
// kernel costs more than a short loop body.
constexpr int kSpinIterations = 2000;

inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
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
    : numThreads_(std::max(1u, numThreads)) {
  workers_.reserve(numThreads_ - 1);
  try {
    for (unsigned i = 1; i < numThreads_; ++i)
      workers_.emplace_back([this, i] { workerLoop(i); });
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

void ThreadPool::runChunk(unsigned index) {
  if (index >= jobChunks_)
    return;
  // Chunk i is [i*base + min(i, extra), ...): the first `extra` chunks get one
  // more element. No products of n, so no overflow for any int64 n.
  int64_t base = jobSize_ / jobChunks_, extra = jobSize_ % jobChunks_;
  int64_t begin = index * base + std::min<int64_t>(index, extra);
  int64_t end = begin + base + (static_cast<int64_t>(index) < extra ? 1 : 0);
  jobBody_(jobContext_, begin, end);
}

void ThreadPool::workerLoop(unsigned index) {
  insideParallelRegion = true;
  uint64_t seen = 0;
  for (;;) {
    uint64_t current = generation_.load(std::memory_order_acquire);
    for (int i = 0; i < kSpinIterations && current == seen; ++i) {
      cpuRelax();
      current = generation_.load(std::memory_order_acquire);
    }
    if (current == seen) {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] {
        return stopping_ || generation_.load(std::memory_order_acquire) != seen;
      });
      if (stopping_)
        return;
      current = generation_.load(std::memory_order_acquire);
    }
    seen = current;
    runChunk(index);
    // Every worker acknowledges every job, even without a chunk, so no
    // worker can still be reading the job fields when the next is written.
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      std::lock_guard<std::mutex> lock(mutex_);
      done_.notify_one();
    }
  }
}

void ThreadPool::waitForWorkers() {
  for (int i = 0; i < kSpinIterations; ++i) {
    if (pending_.load(std::memory_order_acquire) == 0)
      return;
    cpuRelax();
  }
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock,
             [&] { return pending_.load(std::memory_order_acquire) == 0; });
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
  jobSize_ = n;
  jobChunks_ = chunks;
  jobBody_ = body;
  jobContext_ = ctx;
  pending_.store(static_cast<unsigned>(workers_.size()),
                 std::memory_order_relaxed);
  {
    // Under the mutex so a worker about to sleep cannot miss the bump.
    std::lock_guard<std::mutex> lock(mutex_);
    generation_.fetch_add(1, std::memory_order_acq_rel);
  }
  wake_.notify_all();
  insideParallelRegion = true;
  runChunk(0);
  insideParallelRegion = false;
  waitForWorkers();
}

void ThreadPool::parallelForCallback(void *pool, int64_t n,
                                     kiln_parallel_body body, void *ctx) {
  static_cast<ThreadPool *>(pool)->parallelFor(n, body, ctx);
}

} // namespace kiln::rt
