// Dynamic batching for a model whose inputs share a symbolic leading dim
// (the batch): requests that arrive within a short window are concatenated
// along dim 0, run once on one session, and the outputs split back by each
// request's rows. One batching thread per session of the pool.
#ifndef KILN_SERVE_BATCHER_H
#define KILN_SERVE_BATCHER_H

#include "model_pool.h"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace kiln::serve {

class Batcher {
public:
  /// Whether `d`'s inputs all have dim 0 as the same symbol and its outputs
  /// a run-time dim 0, so requests can be stacked along it.
  static bool batchable(const kiln_artifact_descriptor &d);

  /// `maxQueue` requests (at least one full batch) may wait to be batched;
  /// more are rejected.
  Batcher(ModelPool &pool, unsigned sessions, int64_t maxBatch,
          std::chrono::microseconds timeout, unsigned maxQueue);
  ~Batcher();

  /// Runs `inputs` (descriptor order) as part of a batch; blocks until done.
  RunResult run(std::vector<const kiln_tensor *> inputs);

private:
  struct Job {
    std::vector<const kiln_tensor *> inputs;
    int64_t rows;
    std::promise<RunResult> done;
  };
  void loop();
  void runBatch(kiln_session *session, std::vector<std::unique_ptr<Job>> &jobs);

  ModelPool &pool_;
  int64_t maxBatch_;
  size_t maxQueue_;
  std::chrono::microseconds timeout_;
  std::mutex mutex_;
  std::condition_variable arrived_;
  std::deque<std::unique_ptr<Job>> queue_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

} // namespace kiln::serve

#endif // KILN_SERVE_BATCHER_H
