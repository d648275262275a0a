// The thread pool: chunking, coverage, reuse of threads, nesting.
#include <catch.hpp>

#include "thread_pool.h"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>

using kiln::rt::ThreadPool;

namespace {

struct Recorder {
  std::mutex mutex;
  std::vector<std::pair<int64_t, int64_t>> chunks;
  std::set<std::thread::id> threads;
  std::vector<int> hits;
};

void record(void *ctx, int64_t begin, int64_t end) {
  auto *recorder = static_cast<Recorder *>(ctx);
  std::lock_guard<std::mutex> lock(recorder->mutex);
  recorder->chunks.emplace_back(begin, end);
  recorder->threads.insert(std::this_thread::get_id());
  for (int64_t i = begin; i < end; ++i)
    ++recorder->hits[static_cast<size_t>(i)];
}

} // namespace

TEST_CASE("parallel_for covers [0,n) once in static chunks", "[thread_pool]") {
  for (unsigned threads : {1u, 2u, 3u, 4u, 7u}) {
    ThreadPool pool(threads);
    CHECK(pool.numThreads() == threads);
    for (int64_t n : {0, 1, 2, 3, 5, 7, 8, 100, 1001}) {
      Recorder recorder;
      recorder.hits.assign(static_cast<size_t>(n), 0);
      pool.parallelFor(n, record, &recorder);
      CHECK(std::all_of(recorder.hits.begin(), recorder.hits.end(),
                        [](int hits) { return hits == 1; }));
      size_t expectedChunks =
          static_cast<size_t>(std::min<int64_t>(n, threads));
      CHECK(recorder.chunks.size() == expectedChunks);
      // Chunk sizes differ by at most one.
      int64_t smallest = INT64_MAX, largest = 0;
      for (auto [begin, end] : recorder.chunks) {
        smallest = std::min(smallest, end - begin);
        largest = std::max(largest, end - begin);
      }
      if (!recorder.chunks.empty())
        CHECK(largest - smallest <= 1);
    }
  }
}

TEST_CASE("small ranges run inline on the calling thread", "[thread_pool]") {
  ThreadPool pool(4);
  Recorder recorder;
  recorder.hits.assign(1, 0);
  pool.parallelFor(1, record, &recorder);
  CHECK(recorder.threads ==
        std::set<std::thread::id>{std::this_thread::get_id()});
}

TEST_CASE("workers persist across calls", "[thread_pool]") {
  ThreadPool pool(3);
  Recorder recorder;
  recorder.hits.assign(30, 0);
  for (int call = 0; call < 500; ++call)
    pool.parallelFor(30, record, &recorder);
  // The caller plus two workers, however many calls: no thread per call.
  CHECK(recorder.threads.size() <= 3);
  CHECK(recorder.threads.count(std::this_thread::get_id()) == 1);
  CHECK(std::all_of(recorder.hits.begin(), recorder.hits.end(),
                    [](int hits) { return hits == 500; }));
}

TEST_CASE("workers take chunks when the caller is busy", "[thread_pool]") {
  ThreadPool pool(2);
  Recorder recorder;
  recorder.hits.assign(4, 0);
  // Slow chunks: the worker has long enough to wake and claim some.
  pool.parallelFor(
      4,
      [](void *ctx, int64_t begin, int64_t end) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        record(ctx, begin, end);
      },
      &recorder);
  CHECK(recorder.threads.size() == 2);
  CHECK(recorder.chunks.size() == 2);
}

namespace {
struct Nested {
  ThreadPool *pool;
  Recorder inner;
};
void outerBody(void *ctx, int64_t begin, int64_t end) {
  auto *nested = static_cast<Nested *>(ctx);
  for (int64_t i = begin; i < end; ++i)
    nested->pool->parallelFor(10, record, &nested->inner);
}
} // namespace

TEST_CASE("nested parallel_for runs inline instead of deadlocking",
          "[thread_pool]") {
  ThreadPool pool(4);
  Nested nested{&pool, {}};
  nested.inner.hits.assign(10, 0);
  pool.parallelFor(8, outerBody, &nested);
  CHECK(std::all_of(nested.inner.hits.begin(), nested.inner.hits.end(),
                    [](int hits) { return hits == 8; }));
}

TEST_CASE("one pool can be shared by several callers", "[thread_pool]") {
  ThreadPool pool(3);
  Recorder recorders[2];
  for (Recorder &recorder : recorders)
    recorder.hits.assign(64, 0);
  std::thread other([&] {
    for (int call = 0; call < 200; ++call)
      pool.parallelFor(64, record, &recorders[1]);
  });
  for (int call = 0; call < 200; ++call)
    pool.parallelFor(64, record, &recorders[0]);
  other.join();
  for (Recorder &recorder : recorders)
    CHECK(std::all_of(recorder.hits.begin(), recorder.hits.end(),
                      [](int hits) { return hits == 200; }));
}

TEST_CASE("huge ranges are chunked without overflow", "[thread_pool]") {
  ThreadPool pool(3);
  struct Bounds {
    std::mutex mutex;
    std::vector<std::pair<int64_t, int64_t>> chunks;
  } bounds;
  pool.parallelFor(
      INT64_MAX,
      [](void *ctx, int64_t begin, int64_t end) {
        auto *b = static_cast<Bounds *>(ctx);
        std::lock_guard<std::mutex> lock(b->mutex);
        b->chunks.emplace_back(begin, end);
      },
      &bounds);
  std::sort(bounds.chunks.begin(), bounds.chunks.end());
  REQUIRE(bounds.chunks.size() == 3);
  CHECK(bounds.chunks[0].first == 0);
  CHECK(bounds.chunks[0].second == bounds.chunks[1].first);
  CHECK(bounds.chunks[1].second == bounds.chunks[2].first);
  CHECK(bounds.chunks[2].second == INT64_MAX);
}
