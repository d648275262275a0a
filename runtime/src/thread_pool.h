// A fixed set of worker threads that runs the artifact's parallel loops.
// Generated code never creates threads; it calls parallel_for through the
// runtime callbacks, and this pool splits the range statically.
#ifndef KILN_RUNTIME_THREAD_POOL_H
#define KILN_RUNTIME_THREAD_POOL_H

#include "kiln/abi.h"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace kiln::rt {

// Threads available to this process (CPU affinity aware), at least 1.
unsigned availableCores();

class ThreadPool {
public:
  // Most threads a pool can have; chunk indices must fit the claim word.
  static constexpr unsigned kMaxThreads = 1024;

  // `numThreads` counts the calling thread, so a pool of 1 has no workers.
  // Throws std::system_error if the threads cannot be started.
  explicit ThreadPool(unsigned numThreads);
  ~ThreadPool();
  ThreadPool(const ThreadPool &) = delete;
  ThreadPool &operator=(const ThreadPool &) = delete;

  unsigned numThreads() const { return numThreads_; }

  // Splits [0, n) into min(n, numThreads) contiguous chunks of nearly equal
  // size and runs body(ctx, begin, end) once per chunk, on the calling
  // thread and the workers; returns when all chunks are done. Calls with one
  // chunk, and nested calls from inside a body, run inline.
  void parallelFor(int64_t n, kiln_parallel_body body, void *ctx);

  // Adapter with the signature of kiln_runtime_callbacks::parallel_for.
  static void parallelForCallback(void *pool, int64_t n,
                                  kiln_parallel_body body, void *ctx);

private:
  void workerLoop();
  // Claims and runs chunks of job `generation` until none are left.
  void runChunks(uint32_t generation);
  void waitForChunks();

  unsigned numThreads_;
  std::vector<std::thread> workers_;

  // The current job. Written only while no chunk of the previous job is
  // running; read by a thread only after it has claimed a chunk.
  int64_t jobSize_ = 0;
  unsigned jobChunks_ = 0;
  kiln_parallel_body jobBody_ = nullptr;
  void *jobContext_ = nullptr;

  // Chunk boundaries are static, but which thread runs a chunk is not: any
  // participant claims the next unclaimed chunk. On a busy machine a worker
  // may wake late; the caller then runs its chunks instead of waiting for
  // the scheduler. Layout: generation (32 bits) | chunks (16) | next (16).
  // The generation makes a stale claim from an earlier job fail.
  std::atomic<uint64_t> claim_{0};
  std::atomic<unsigned> unfinished_{0}; // chunks of this job not yet done
  bool stopping_ = false;               // guarded by mutex_
  std::mutex mutex_;
  std::condition_variable wake_; // workers: new job or stop
  std::condition_variable done_; // dispatcher: unfinished_ reached 0
  std::mutex dispatchMutex_;     // one job at a time per pool
};

} // namespace kiln::rt

#endif // KILN_RUNTIME_THREAD_POOL_H
