//===- ArenaPlanner.cpp - First-fit placement over live intervals ---------===//
#include "backends/cpu/ArenaPlanner.h"

#include <algorithm>
#include <cassert>
#include <numeric>

using namespace mlir::kiln;

static uint64_t alignUp(uint64_t value, uint64_t alignment) {
  return (value + alignment - 1) & ~(alignment - 1);
}

ArenaPlan mlir::kiln::planArena(const std::vector<ArenaBuffer> &buffers,
                                uint64_t alignment) {
  assert(alignment && (alignment & (alignment - 1)) == 0 &&
         "alignment must be a power of two");
  ArenaPlan plan;
  plan.offsets.assign(buffers.size(), 0);

  // Largest first packs better: small buffers fill the holes big ones leave.
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (buffers[a].size != buffers[b].size)
      return buffers[a].size > buffers[b].size;
    return buffers[a].firstUse < buffers[b].firstUse;
  });

  struct Placed {
    uint64_t begin, end;
  };
  std::vector<size_t> placed;
  std::vector<Placed> conflicts;
  for (size_t idx : order) {
    const ArenaBuffer &buf = buffers[idx];
    // Only buffers alive at the same time constrain this one.
    conflicts.clear();
    for (size_t other : placed) {
      const ArenaBuffer &o = buffers[other];
      if (o.lastUse < buf.firstUse || buf.lastUse < o.firstUse)
        continue;
      conflicts.push_back(
          {plan.offsets[other],
           plan.offsets[other] + std::max<uint64_t>(o.size, 1)});
    }
    std::sort(
        conflicts.begin(), conflicts.end(),
        [](const Placed &a, const Placed &b) { return a.begin < b.begin; });
    // Lowest aligned offset whose [offset, offset + size) hits no conflict.
    uint64_t offset = 0;
    uint64_t size = std::max<uint64_t>(buf.size, 1);
    for (const Placed &c : conflicts) {
      if (offset + size <= c.begin)
        break;
      offset = std::max(offset, alignUp(c.end, alignment));
    }
    plan.offsets[idx] = offset;
    placed.push_back(idx);
    plan.size = std::max(plan.size, alignUp(offset + buf.size, alignment));
  }
  return plan;
}
