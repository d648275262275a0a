//===- ArenaPlannerTest.cpp - First-fit placement over live intervals -----===//
#include "backends/cpu/ArenaPlanner.h"

#include <catch.hpp>

#include <random>

using mlir::kiln::ArenaBuffer;
using mlir::kiln::ArenaPlan;
using mlir::kiln::planArena;

static bool overlapInTime(const ArenaBuffer &a, const ArenaBuffer &b) {
  return !(a.lastUse < b.firstUse || b.lastUse < a.firstUse);
}

/// The property the generated code relies on.
static void checkPlan(const std::vector<ArenaBuffer> &buffers,
                      const ArenaPlan &plan) {
  REQUIRE(plan.offsets.size() == buffers.size());
  REQUIRE(plan.size % 64 == 0);
  for (size_t i = 0; i < buffers.size(); ++i) {
    CHECK(plan.offsets[i] % 64 == 0);
    CHECK(plan.offsets[i] + buffers[i].size <= plan.size);
    for (size_t j = i + 1; j < buffers.size(); ++j) {
      if (!overlapInTime(buffers[i], buffers[j]))
        continue;
      bool disjoint = plan.offsets[i] + buffers[i].size <= plan.offsets[j] ||
                      plan.offsets[j] + buffers[j].size <= plan.offsets[i];
      CHECK(disjoint);
    }
  }
}

TEST_CASE("chains of short-lived buffers reuse memory", "[arena_planner]") {
  // a -> b -> c -> d, each live from its producer to its consumer.
  std::vector<ArenaBuffer> buffers = {
      {1000, 0, 1}, {1000, 1, 2}, {1000, 2, 3}, {1000, 3, 4}};
  ArenaPlan plan = planArena(buffers);
  checkPlan(buffers, plan);
  // Two slots are enough (ping-pong).
  CHECK(plan.size == 2 * 1024);
  CHECK(plan.offsets[0] == plan.offsets[2]);
  CHECK(plan.offsets[1] == plan.offsets[3]);
}

TEST_CASE("a small buffer fills the hole a freed one leaves",
          "[arena_planner]") {
  std::vector<ArenaBuffer> buffers = {
      {256, 0, 2}, // big, lives early
      {128, 1, 9}, // long-lived
      {64, 5, 6},  // may reuse the big one's bytes
  };
  ArenaPlan plan = planArena(buffers);
  checkPlan(buffers, plan);
  CHECK(plan.size == 384);
  CHECK(plan.offsets[2] == plan.offsets[0]);
}

TEST_CASE("empty and zero-sized inputs", "[arena_planner]") {
  CHECK(planArena({}).size == 0);
  std::vector<ArenaBuffer> buffers = {{0, 0, 3}, {0, 1, 2}, {8, 0, 3}};
  ArenaPlan plan = planArena(buffers);
  checkPlan(buffers, plan);
}

TEST_CASE("random plans never overlap and are deterministic",
          "[arena_planner]") {
  std::mt19937 rng(1234);
  for (int round = 0; round < 200; ++round) {
    std::vector<ArenaBuffer> buffers(rng() % 40);
    for (ArenaBuffer &b : buffers) {
      b.size = rng() % 5000;
      b.firstUse = rng() % 50;
      b.lastUse = b.firstUse + rng() % 20;
    }
    ArenaPlan plan = planArena(buffers);
    checkPlan(buffers, plan);
    CHECK(planArena(buffers).offsets == plan.offsets);
    uint64_t total = 0;
    for (const ArenaBuffer &b : buffers)
      total += (b.size + 63) / 64 * 64;
    CHECK(plan.size <= total);
  }
}
