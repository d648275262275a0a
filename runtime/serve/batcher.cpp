#include "batcher.h"

#include <algorithm>
#include <cstring>

using namespace kiln::serve;

bool Batcher::batchable(const kiln_artifact_descriptor &d) {
  if (d.num_inputs == 0 || d.num_outputs == 0)
    return false;
  int32_t symbol = -1;
  for (uint32_t i = 0; i < d.num_inputs; ++i) {
    const kiln_tensor_desc &in = d.inputs[i];
    if (in.rank == 0 || !in.symbols || in.symbols[0] < 0 ||
        in.dtype == KILN_DTYPE_STRING)
      return false;
    if (symbol >= 0 && in.symbols[0] != symbol)
      return false;
    symbol = in.symbols[0];
  }
  for (uint32_t i = 0; i < d.num_outputs; ++i)
    if (d.outputs[i].rank == 0 || d.outputs[i].shape[0] != -1 ||
        d.outputs[i].dtype == KILN_DTYPE_STRING)
      return false;
  return true;
}

Batcher::Batcher(ModelPool &pool, unsigned sessions, int64_t maxBatch,
                 std::chrono::microseconds timeout, unsigned maxQueue)
    : pool_(pool), maxBatch_(maxBatch),
      maxQueue_(std::max<size_t>(maxQueue, size_t(maxBatch))),
      timeout_(timeout) {
  for (unsigned i = 0; i < sessions; ++i)
    threads_.emplace_back([this] { loop(); });
}

Batcher::~Batcher() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  arrived_.notify_all();
  for (std::thread &t : threads_)
    t.join();
}

RunResult Batcher::run(std::vector<const kiln_tensor *> inputs) {
  auto job = std::make_unique<Job>();
  job->rows = kiln_tensor_shape(inputs[0])[0];
  job->inputs = std::move(inputs);
  std::future<RunResult> done = job->done.get_future();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (queue_.size() >= maxQueue_) {
      RunResult full;
      full.rejected = true;
      return full;
    }
    queue_.push_back(std::move(job));
  }
  arrived_.notify_one();
  return done.get();
}

void Batcher::loop() {
  while (true) {
    std::vector<std::unique_ptr<Job>> jobs;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      arrived_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_ && queue_.empty())
        return;
      // The first request, then whatever arrives within the window, up to
      // maxBatch rows.
      auto deadline = std::chrono::steady_clock::now() + timeout_;
      int64_t rows = 0;
      while (true) {
        while (!queue_.empty() && rows + queue_.front()->rows <= maxBatch_) {
          rows += queue_.front()->rows;
          jobs.push_back(std::move(queue_.front()));
          queue_.pop_front();
        }
        if (jobs.empty() && !queue_.empty()) { // one request beyond maxBatch
          rows += queue_.front()->rows;
          jobs.push_back(std::move(queue_.front()));
          queue_.pop_front();
        }
        // Full, stopping, the next request does not fit, or the window is
        // over: run what we have.
        if (rows >= maxBatch_ || stopping_ || !queue_.empty() ||
            !arrived_.wait_until(lock, deadline,
                                 [&] { return stopping_ || !queue_.empty(); }))
          break;
      }
    }
    ModelPool::Lease lease = pool_.acquire();
    if (!lease) {
      for (auto &job : jobs) {
        RunResult full;
        full.rejected = true;
        job->done.set_value(std::move(full));
      }
      continue;
    }
    runBatch(lease.get(), jobs);
  }
}

void Batcher::runBatch(kiln_session *session,
                       std::vector<std::unique_ptr<Job>> &jobs) {
  const kiln_artifact_descriptor &d = pool_.descriptor();
  // Requests whose other dims differ cannot be stacked: run them alone.
  auto sameTail = [&](const kiln_tensor *a, const kiln_tensor *b) {
    return kiln_tensor_rank(a) == kiln_tensor_rank(b) &&
           std::memcmp(kiln_tensor_shape(a) + 1, kiln_tensor_shape(b) + 1,
                       sizeof(int64_t) * (kiln_tensor_rank(a) - 1)) == 0;
  };
  bool stackable = true;
  for (auto &job : jobs)
    for (uint32_t i = 0; i < d.num_inputs; ++i)
      stackable &= sameTail(job->inputs[i], jobs[0]->inputs[i]);
  auto runOne = [&](const std::vector<const kiln_tensor *> &inputs) {
    std::vector<kiln_named_tensor> named;
    for (uint32_t i = 0; i < d.num_inputs; ++i)
      named.push_back({d.inputs[i].name, inputs[i]});
    return runSession(session, named, d.num_outputs);
  };
  if (jobs.size() == 1 || !stackable) {
    for (auto &job : jobs)
      job->done.set_value(runOne(job->inputs));
    return;
  }
  // Stack the inputs along dim 0.
  int64_t total = 0;
  for (auto &job : jobs)
    total += job->rows;
  std::vector<kiln_tensor *> stacked;
  for (uint32_t i = 0; i < d.num_inputs; ++i) {
    const kiln_tensor *first = jobs[0]->inputs[i];
    std::vector<int64_t> shape(kiln_tensor_shape(first),
                               kiln_tensor_shape(first) +
                                   kiln_tensor_rank(first));
    shape[0] = total;
    kiln_tensor *t = nullptr;
    kiln_tensor_create(kiln_tensor_dtype(first), kiln_tensor_rank(first),
                       shape.data(), &t);
    char *out = static_cast<char *>(kiln_tensor_data(t));
    for (auto &job : jobs) {
      size_t bytes = kiln_tensor_size_bytes(job->inputs[i]);
      std::memcpy(out,
                  kiln_tensor_data(const_cast<kiln_tensor *>(job->inputs[i])),
                  bytes);
      out += bytes;
    }
    stacked.push_back(t);
  }
  RunResult all =
      runOne(std::vector<const kiln_tensor *>(stacked.begin(), stacked.end()));
  for (kiln_tensor *t : stacked)
    kiln_tensor_destroy(t);
  // An output whose dim 0 is not the stacked rows (a reduction over the
  // batch) cannot be split: every request then runs alone.
  bool splittable = true;
  for (uint32_t o = 0; all.status == KILN_OK && o < d.num_outputs; ++o)
    splittable &= kiln_tensor_shape(all.outputs[o])[0] == total;
  if (all.status != KILN_OK || !splittable) {
    for (kiln_tensor *t : all.outputs)
      kiln_tensor_destroy(t);
    for (auto &job : jobs)
      job->done.set_value(runOne(job->inputs));
    return;
  }
  // Split the outputs by each request's rows.
  std::vector<int64_t> offsets(d.num_outputs, 0);
  for (auto &job : jobs) {
    RunResult r;
    r.status = all.status;
    r.error = all.error;
    for (uint32_t o = 0; all.status == KILN_OK && o < d.num_outputs; ++o) {
      const kiln_tensor *src = all.outputs[o];
      std::vector<int64_t> shape(kiln_tensor_shape(src),
                                 kiln_tensor_shape(src) +
                                     kiln_tensor_rank(src));
      size_t rowBytes = shape[0] ? kiln_tensor_size_bytes(src) / shape[0] : 0;
      shape[0] = job->rows;
      kiln_tensor *t = nullptr;
      kiln_tensor_create(kiln_tensor_dtype(src), kiln_tensor_rank(src),
                         shape.data(), &t);
      std::memcpy(kiln_tensor_data(t),
                  static_cast<const char *>(
                      kiln_tensor_data(const_cast<kiln_tensor *>(src))) +
                      offsets[o] * rowBytes,
                  job->rows * rowBytes);
      offsets[o] += job->rows;
      r.outputs.push_back(t);
    }
    job->done.set_value(std::move(r));
  }
  for (kiln_tensor *t : all.outputs)
    kiln_tensor_destroy(t);
}
