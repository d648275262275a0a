//===- ImportControlFlow.cpp - If, Loop and Scan --------------------------===//
//
// Control flow becomes straight-line kiln ops; the bodies are imported in
// place (NodeContext::importSubgraph):
//
//   If     a constant condition imports the branch it picks; a run-time one
//          becomes an scf.if (ImportIfRunTime.cpp).
//   Scan   unrolled over the scan axis when every extent is static:
//          iteration t runs the body on the states and slice t of each scan
//          input; the scan outputs are stacked along their axes. Otherwise,
//          or beyond kMaxIterations, one run-time loop
//          (ImportLoopRunTime.cpp).
//   Loop   unrolled for a trip count that is a constant, or, when the trip
//          count or the condition is a run-time value, for the iteration
//          count the model declares for a scan output (checked when the
//          model runs). Without scan outputs, a run-time condition keeps
//          each carried value from the last iteration it held. Any other
//          Loop, and one of more than kMaxIterations, runs as a loop in
//          the artifact (ImportLoopRunTime.cpp).
//
// Unrolled bodies run once per iteration in the artifact, so unrolling is
// capped at kMaxIterations, and at NodeContext::kUnrollBudget body nodes
// imported in all (the budget bounds the whole import's time, so it is
// shared): past it, Loops and Scans run as loops in the artifact, unless
// the run-time form refuses the body, which is then unrolled within the
// importer's cap of NodeContext::kMaxUnrolledNodes.
//
//===----------------------------------------------------------------------===//
#include "compiler/import/onnx/ImportControlFlow.h"
#include "compiler/import/onnx/ImportIndexing.h"
#include "compiler/import/onnx/ImportNNBuilder.h"

#include "onnx/onnx.pb.h"

#include "mlir/IR/Matchers.h"
#include <fmt/format.h>
#include <fmt/ranges.h>

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::onnx_import;
namespace k = mlir::kiln;

namespace {
constexpr int64_t kMaxIterations = 1024;

const onnx::GraphProto *graphAttr(NodeContext &c, StringRef name) {
  const auto *a = c.attr(name);
  return a && a->has_g() ? &a->g() : nullptr;
}

/// The value of a constant boolean or integer scalar, if it is one.
std::optional<bool> constantFlag(Value v) {
  DenseElementsAttr attr;
  if (!v || !matchPattern(v, m_Constant(&attr)) || attr.getNumElements() != 1)
    return std::nullopt;
  if (isa<IntegerType>(attr.getElementType()))
    return !(*attr.getValues<APInt>().begin()).isZero();
  return std::nullopt;
}

/// The nodes of `g` and of the graphs its nodes hold, each counted once.
uint64_t nodeCount(const onnx::GraphProto &g) {
  uint64_t n = g.node_size();
  for (const auto &node : g.node())
    for (const auto &a : node.attribute()) {
      if (a.has_g())
        n += nodeCount(a.g());
      for (const auto &sub : a.graphs())
        n += nodeCount(sub);
    }
  return n;
}

/// Whether `copies` copies of `body` stay within the unroll budget.
bool unrollFits(NodeContext &c, const onnx::GraphProto &body, int64_t copies) {
  uint64_t n = nodeCount(body);
  return copies <= 0 ||
         (n <= NodeContext::kUnrollBudget / copies &&
          c.unrolledNodes() + n * copies <= NodeContext::kUnrollBudget);
}

/// After the run-time loop refused a body the unrolled form takes (a
/// carried value whose rank changes), forgets that refusal so the caller
/// unrolls instead, within the importer's own cap; false when the failure
/// was not a refusal.
bool forgetFailure(NodeContext &c) {
  if (!c.errorIsUnsupported)
    return false;
  c.error.clear();
  c.errorIsUnsupported = false;
  return true;
}

/// `v` with a unit dim inserted at `axis` (static shapes).
Value unsqueeze(NNBuilder &e, Value v, int64_t axis) {
  SmallVector<int64_t> shape(e.shape(v));
  shape.insert(shape.begin() + axis, 1);
  return e.reshape(v, shape);
}

/// Slice `index` of `v` along `axis`, the axis dropped.
Value take(NNBuilder &e, Value v, int64_t axis, int64_t index) {
  SmallVector<int64_t> shape(e.shape(v));
  shape.erase(shape.begin() + axis);
  return e.reshape(e.slice(v, axis, index, index + 1), shape);
}

Results importIf(NodeContext &c) {
  const auto *thenBody = graphAttr(c, "then_branch");
  const auto *elseBody = graphAttr(c, "else_branch");
  if (!thenBody || !elseBody)
    return c.fail("needs then_branch and else_branch graphs");
  Value cond = c.input(0);
  if (!cond || c.type(cond).getNumElements() != 1)
    return c.fail("the condition must hold one value");
  if (auto known = constantFlag(cond))
    return c.importSubgraph(*known ? *thenBody : *elseBody, {});

  return importRunTimeIf(c, *thenBody, *elseBody, cond);
}

/// Scan over `scans` (static extents along `axes`) with carried `states`;
/// the final states then the stacked scan outputs.
Results runScan(NodeContext &c, const onnx::GraphProto &body,
                SmallVector<Value> states, ArrayRef<Value> scans,
                ArrayRef<int64_t> axes, ArrayRef<int64_t> directions,
                ArrayRef<int64_t> outAxes, ArrayRef<int64_t> outDirections) {
  NNBuilder e(c);
  int64_t steps = e.shape(scans[0])[axes[0]];
  for (auto [j, v] : llvm::enumerate(scans))
    if (e.shape(v)[axes[j]] != steps)
      return c.fail("the scan inputs differ in length");
  if (steps < 1 || steps > kMaxIterations)
    return c.unsupported(
        fmt::format("Scan of {} iterations (unrolled: 1 to {} are supported)",
                    steps, kMaxIterations));
  size_t numStates = states.size();
  SmallVector<SmallVector<Value>> outputs;
  for (int64_t t = 0; t < steps; ++t) {
    SmallVector<Value> inputs(states);
    for (auto [j, v] : llvm::enumerate(scans))
      inputs.push_back(take(e, v, axes[j], directions[j] ? steps - 1 - t : t));
    if (e.failed)
      return failure();
    auto out = c.importSubgraph(body, inputs);
    if (failed(out))
      return failure();
    if (out->size() < numStates)
      return c.fail("the body gives fewer outputs than there are states");
    states.assign(out->begin(), out->begin() + numStates);
    outputs.resize(out->size() - numStates);
    for (size_t k = numStates; k < out->size(); ++k)
      outputs[k - numStates].push_back((*out)[k]);
  }
  SmallVector<Value> results(states);
  for (auto [k, rows] : llvm::enumerate(outputs)) {
    int64_t axis = k < outAxes.size() ? outAxes[k] : 0;
    int64_t rank = e.rank(rows[0]) + 1;
    if (axis < 0)
      axis += rank;
    if (axis < 0 || axis >= rank)
      return c.fail("scan_output_axes out of range");
    if (k < outDirections.size() && outDirections[k])
      std::reverse(rows.begin(), rows.end());
    SmallVector<Value> parts;
    for (Value r : rows)
      parts.push_back(unsqueeze(e, r, axis));
    results.push_back(e.concat(parts, axis));
  }
  return e.done(results);
}

Results importScan(NodeContext &c) {
  const auto *body = graphAttr(c, "body");
  if (!body)
    return c.fail("needs a body graph");
  int64_t m = c.attrInt("num_scan_inputs", 0);
  bool batched = c.opset < 9; // Scan-8: a batch dim and sequence_lens first
  size_t first = batched ? 1 : 0;
  if (batched && c.hasInput(0))
    return c.unsupported("Scan-8 with sequence_lens");
  int64_t n = (int64_t)c.numInputs() - (int64_t)first - m;
  if (m < 1 || n < 0)
    return c.fail("num_scan_inputs does not fit the inputs");
  SmallVector<Value> states, scans;
  for (int64_t i = 0; i < n; ++i)
    states.push_back(c.input(first + i));
  for (int64_t i = 0; i < m; ++i)
    scans.push_back(c.input(first + n + i));
  for (Value v : llvm::concat<Value>(states, scans))
    if (!v)
      return c.fail("a state or scan input is missing");
  bool runTime = llvm::any_of(llvm::concat<Value>(states, scans), [&](Value v) {
    return !c.type(v).hasStaticShape();
  });
  if (batched && runTime)
    return c.unsupported("Scan-8 of inputs with run-time extents");
  auto ints = [&](StringRef name, int64_t count) {
    SmallVector<int64_t> v = c.attrInts(name).value_or(SmallVector<int64_t>());
    v.resize(std::max<int64_t>(count, v.size()), 0);
    return v;
  };
  SmallVector<int64_t> axes = ints("scan_input_axes", m),
                       directions = ints(
                           batched ? "directions" : "scan_input_directions", m),
                       outAxes = ints("scan_output_axes", 0),
                       outDirections = ints("scan_output_directions", 0);
  for (auto [j, v] : llvm::enumerate(scans)) {
    auto axis = c.normalizeAxis(axes[j], c.type(v).getRank() - batched);
    if (!axis)
      return c.fail("scan_input_axes out of range");
    axes[j] = *axis;
  }
  if (!batched) {
    int64_t steps = c.type(scans[0]).getDimSize(axes[0]);
    if (runTime || steps < 1 || steps > kMaxIterations)
      return importRunTimeScan(c, *body, states, scans, axes, directions,
                               outAxes, outDirections);
    if (!unrollFits(c, *body, steps)) {
      auto looped = importRunTimeScan(c, *body, states, scans, axes, directions,
                                      outAxes, outDirections);
      if (succeeded(looped) || !forgetFailure(c))
        return looped;
    }
    return runScan(c, *body, states, scans, axes, directions, outAxes,
                   outDirections);
  }

  // Scan-8: each batch element on its own, the results stacked again.
  NNBuilder e(c);
  int64_t batch = e.shape(scans[0])[0];
  int64_t steps = e.shape(scans[0])[1 + axes[0]];
  if (uint64_t n = nodeCount(*body);
      c.unrolledNodes() + n * batch * steps > NodeContext::kMaxUnrolledNodes)
    return c.fail(fmt::format("control flow unrolls to more than {} nodes "
                              "(Scan-8: {} batches x {} steps x {} body nodes)",
                              NodeContext::kMaxUnrolledNodes, batch, steps, n));
  SmallVector<SmallVector<Value>> perBatch;
  for (int64_t b = 0; b < batch; ++b) {
    SmallVector<Value> s, x;
    for (Value v : states)
      s.push_back(take(e, v, 0, b));
    for (Value v : scans)
      x.push_back(take(e, v, 0, b));
    if (e.failed)
      return failure();
    auto r = runScan(c, *body, s, x, axes, directions, {}, {});
    if (failed(r))
      return failure();
    perBatch.push_back(*r);
  }
  SmallVector<Value> results;
  for (size_t k = 0; k < perBatch[0].size(); ++k) {
    SmallVector<Value> parts;
    for (auto &r : perBatch)
      parts.push_back(unsqueeze(e, r[k], 0));
    results.push_back(e.concat(parts, 0));
  }
  return e.done(results);
}

Results importLoop(NodeContext &c) {
  const auto *body = graphAttr(c, "body");
  if (!body)
    return c.fail("needs a body graph");
  size_t carried = c.numInputs() >= 2 ? c.numInputs() - 2 : 0;
  int64_t scanOutputs = (int64_t)body->output_size() - 1 - (int64_t)carried;
  if (scanOutputs < 0)
    return c.fail("the body gives fewer outputs than the loop carries");
  NNBuilder e(c);
  Type i64 = c.b.getI64Type();
  Value tripCount = c.hasInput(0) ? e.scalarOf(c.input(0), i64) : Value();
  Value cond =
      c.hasInput(1) ? e.scalarOf(c.input(1), c.b.getI1Type()) : Value();
  std::optional<int64_t> constTrips;
  if (auto t = c.constantInts(0); t && t->size() == 1)
    constTrips = (*t)[0];
  bool condAlwaysTrue = !cond || constantFlag(cond).value_or(false);
  if (cond && !constantFlag(cond).value_or(true))
    constTrips = 0; // a constant false condition runs no iteration

  // The iteration count: the constant trip count when nothing can stop the
  // loop earlier, else the leading extent the model declares for a scan
  // output (checked below).
  std::optional<int64_t> steps;
  std::string declaredText;
  for (int64_t k = 0; k < scanOutputs; ++k)
    if (auto d = c.declaredShape(carried + k); d && !d->empty()) {
      steps = (*d)[0];
      declaredText = fmt::format("'{}' as [{}]", c.node.output(carried + k),
                                 fmt::join(*d, ", "));
      break;
    }
  bool checked = true;
  if (constTrips && (condAlwaysTrue || *constTrips == 0)) {
    steps = constTrips;
    checked = false;
  } else if (!steps && constTrips && scanOutputs == 0) {
    steps = constTrips; // a run-time condition only freezes carried values
    checked = false;
  }
  // Otherwise, beyond what unrolling allows, or with no iteration (a
  // negative trip count runs none) while scan outputs need their row
  // type: one run-time loop.
  if (!steps || *steps > kMaxIterations || *steps < 0 ||
      (*steps == 0 && scanOutputs > 0))
    return importRunTimeLoop(c, *body, carried, scanOutputs, tripCount, cond);
  if (!unrollFits(c, *body, *steps)) {
    auto looped =
        importRunTimeLoop(c, *body, carried, scanOutputs, tripCount, cond);
    if (succeeded(looped) || !forgetFailure(c))
      return looped;
  }

  SmallVector<Value> values;
  for (size_t i = 0; i < carried; ++i)
    values.push_back(c.input(2 + i));
  Value active = cond ? cond : c.scalar(c.b.getI1Type(), 1.0);
  Value allActive = active;
  SmallVector<SmallVector<Value>> scans(scanOutputs);
  for (int64_t t = 0; t < *steps; ++t) {
    SmallVector<Value> inputs{c.scalar(i64, (double)t), active};
    inputs.append(values);
    auto out = c.importSubgraph(*body, inputs);
    if (failed(out))
      return failure();
    Value next = e.scalarOf((*out)[0], c.b.getI1Type());
    for (size_t i = 0; i < carried; ++i) {
      Value v = (*out)[1 + i];
      if (!checked && !condAlwaysTrue) {
        // Keep the value of the last iteration that ran.
        if (v.getType() != values[i].getType())
          return c.unsupported("Loop with a run-time condition whose "
                               "carried values change shape");
        v = e.select(active, v, values[i]);
      }
      values[i] = v;
    }
    for (int64_t k = 0; k < scanOutputs; ++k)
      scans[k].push_back(unsqueeze(e, (*out)[1 + carried + k], 0));
    active = e.op<k::AndOp>({active, next});
    if (t + 1 < *steps)
      allActive = e.op<k::AndOp>({allActive, active});
  }
  if (checked) {
    // Every declared iteration ran, and the loop stops after the last.
    Value stops = e.op<k::NotOp>({active});
    if (tripCount)
      stops = e.op<k::OrOp>(
          {stops, e.equal(e.cast(tripCount, i64), c.scalar(i64, *steps))});
    Value ok = *steps ? e.op<k::AndOp>({allActive, stops}) : stops;
    if (e.failed)
      return failure();
    k::AssertOp::create(
        c.b, c.loc, ok,
        c.b.getStringAttr(fmt::format(
            "Loop: the loop runs other than the {} iterations the model "
            "declares for {}",
            *steps, declaredText)));
  }
  SmallVector<Value> results(values);
  for (auto &rows : scans)
    results.push_back(e.concat(rows, 0));
  return e.done(results);
}
} // namespace

void mlir::kiln::onnx_import::registerControlFlowHandlers(
    llvm::StringMap<OpHandler> &t) {
  t["If"] = importIf;
  t["Loop"] = importLoop;
  t["Scan"] = importScan;
}
