// A served model: one loaded artifact, a fixed pool of sessions (one run
// each at a time) and a bounded queue of requests waiting for one, plus
// the counters /metrics reports.
#ifndef KILN_SERVE_MODEL_POOL_H
#define KILN_SERVE_MODEL_POOL_H

#include "kiln/runtime.h"

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace kiln::serve {

/// The outputs of one run (descriptor order), owned, or the failure.
struct RunResult {
  std::vector<kiln_tensor *> outputs;
  kiln_status status = KILN_OK;
  std::string error;
  /// No session or batch slot was free: nothing ran (the server answers
  /// 503).
  bool rejected = false;
};

/// One run of `session` on `inputs`, `numOutputs` outputs.
RunResult runSession(kiln_session *session,
                     const std::vector<kiln_named_tensor> &inputs,
                     size_t numOutputs);

/// Upper bounds (seconds) of the latency histogram's buckets.
inline constexpr std::array<double, 12> kLatencyBuckets = {
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5};

class ModelPool {
public:
  /// Loads `path` and creates `sessions` sessions of `threads` threads
  /// each; throws std::runtime_error with the runtime's message.
  ModelPool(std::string name, const std::string &path, unsigned sessions,
            unsigned threads, unsigned maxQueue);
  ~ModelPool();
  ModelPool(const ModelPool &) = delete;
  ModelPool &operator=(const ModelPool &) = delete;

  const std::string &name() const { return name_; }
  const kiln_artifact_descriptor &descriptor() const { return *descriptor_; }

  /// A session for one run, returned to the pool when the lease ends;
  /// waiting requests get theirs first come, first served. Null when
  /// `maxQueue` requests are already waiting (the caller answers 503).
  class Lease {
  public:
    Lease(ModelPool *pool, kiln_session *session)
        : pool_(pool), session_(session) {}
    Lease(Lease &&other) noexcept
        : pool_(other.pool_), session_(other.session_) {
      other.session_ = nullptr;
    }
    ~Lease();
    kiln_session *get() const { return session_; }
    explicit operator bool() const { return session_ != nullptr; }

  private:
    ModelPool *pool_;
    kiln_session *session_;
  };
  Lease acquire();

  /// Counters for /metrics.
  void record(bool ok, double seconds);
  std::string metrics() const;

private:
  std::string name_;
  kiln_model *model_ = nullptr;
  const kiln_artifact_descriptor *descriptor_ = nullptr;
  std::vector<kiln_session *> all_, free_;
  unsigned maxQueue_;
  std::deque<uint64_t> queue_; ///< tickets of waiting requests, in order
  uint64_t nextTicket_ = 0;
  mutable std::mutex mutex_;
  std::condition_variable available_;
  std::atomic<uint64_t> requests_{0}, failures_{0}, rejected_{0};
  std::array<std::atomic<uint64_t>, kLatencyBuckets.size() + 1> buckets_{};
  std::atomic<uint64_t> latencyMicros_{0};
};

} // namespace kiln::serve

#endif // KILN_SERVE_MODEL_POOL_H
