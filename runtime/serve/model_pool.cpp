#include "model_pool.h"

#include <sstream>
#include <stdexcept>

using namespace kiln::serve;

RunResult kiln::serve::runSession(kiln_session *session,
                                  const std::vector<kiln_named_tensor> &inputs,
                                  size_t numOutputs) {
  RunResult r;
  r.outputs.assign(numOutputs, nullptr);
  r.status = kiln_session_run(session, inputs.data(), inputs.size(),
                              r.outputs.data(), r.outputs.size());
  if (r.status != KILN_OK)
    r.error = kiln_last_error();
  return r;
}

ModelPool::ModelPool(std::string name, const std::string &path,
                     unsigned sessions, unsigned threads, unsigned maxQueue)
    : name_(std::move(name)), maxQueue_(maxQueue) {
  if (kiln_model_load(path.c_str(), &model_) != KILN_OK)
    throw std::runtime_error(kiln_last_error());
  descriptor_ = kiln_model_descriptor(model_);
  kiln_session_options options{threads, 0};
  for (unsigned i = 0; i < sessions; ++i) {
    kiln_session *session = nullptr;
    if (kiln_session_create(model_, &options, &session) != KILN_OK) {
      std::string error = kiln_last_error();
      for (kiln_session *s : all_)
        kiln_session_destroy(s);
      kiln_model_free(model_);
      throw std::runtime_error(error);
    }
    all_.push_back(session);
  }
  free_ = all_;
}

ModelPool::~ModelPool() {
  for (kiln_session *s : all_)
    kiln_session_destroy(s);
  kiln_model_free(model_);
}

ModelPool::Lease ModelPool::acquire() {
  std::unique_lock<std::mutex> lock(mutex_);
  if (free_.empty() || !queue_.empty()) {
    if (queue_.size() >= maxQueue_) {
      ++rejected_;
      return Lease(this, nullptr);
    }
    // First come, first served: each waiter takes a ticket and goes when
    // it is at the head of the queue and a session is free.
    uint64_t ticket = nextTicket_++;
    queue_.push_back(ticket);
    available_.wait(lock,
                    [&] { return queue_.front() == ticket && !free_.empty(); });
    queue_.pop_front();
  }
  kiln_session *session = free_.back();
  free_.pop_back();
  bool more = !free_.empty() && !queue_.empty();
  lock.unlock();
  if (more)
    available_.notify_all(); // the next in line may take another session
  return Lease(this, session);
}

ModelPool::Lease::~Lease() {
  if (!session_)
    return;
  {
    std::lock_guard<std::mutex> lock(pool_->mutex_);
    pool_->free_.push_back(session_);
  }
  pool_->available_.notify_all();
}

void ModelPool::record(bool ok, double seconds) {
  ++requests_;
  if (!ok)
    ++failures_;
  size_t b = 0;
  while (b < kLatencyBuckets.size() && seconds > kLatencyBuckets[b])
    ++b;
  ++buckets_[b];
  latencyMicros_ += static_cast<uint64_t>(seconds * 1e6);
}

std::string ModelPool::metrics() const {
  std::ostringstream out;
  std::string label = "{model=\"" + name_ + "\"";
  out << "kiln_requests_total" << label << "} " << requests_ << "\n";
  out << "kiln_request_failures_total" << label << "} " << failures_ << "\n";
  out << "kiln_requests_rejected_total" << label << "} " << rejected_ << "\n";
  uint64_t cumulative = 0;
  for (size_t b = 0; b <= kLatencyBuckets.size(); ++b) {
    cumulative += buckets_[b];
    out << "kiln_request_duration_seconds_bucket" << label << ",le=\"";
    if (b < kLatencyBuckets.size())
      out << kLatencyBuckets[b];
    else
      out << "+Inf";
    out << "\"} " << cumulative << "\n";
  }
  out << "kiln_request_duration_seconds_sum" << label << "} "
      << latencyMicros_ / 1e6 << "\n";
  out << "kiln_request_duration_seconds_count" << label << "} " << requests_
      << "\n";
  {
    std::lock_guard<std::mutex> lock(mutex_);
    out << "kiln_queue_depth" << label << "} " << queue_.size() << "\n";
  }
  return out.str();
}
