//===- ImportRNN.cpp - RNN, GRU and LSTM unrolled over time ---------------===//
//
// Over a static sequence length each recurrence is unrolled into kiln ops:
// the input projection of all time steps is one matmul per direction, and
// each step adds the recurrent matmul and the gate math of the ONNX spec.
// Over a run-time length the steps are one loop (importRunTimeRecurrence)
// whose iteration gathers its step of the projection.
// Constant sequence_lens shorter than the sequence (forward direction) are
// masks: past its length a batch entry keeps its state and outputs zeros.
//
//===----------------------------------------------------------------------===//

#include "compiler/import/onnx/ImportControlFlow.h"
#include "compiler/import/onnx/ImportNNBuilder.h"
#include "compiler/import/onnx/SymbolicShapes.h"

#include "onnx/onnx.pb.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/StringSet.h"

#include <fmt/format.h>

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::onnx_import;

namespace {
using Results = FailureOr<SmallVector<Value>>;

enum class Cell { RNN, GRU, LSTM };

struct Activation {
  std::string name;
  double alpha = 0, beta = 0;
};

/// What one node's recurrence looks like; filled by read() from the node.
struct Recurrence {
  Cell cell;
  int64_t gates = 1, hidden = 0, seq = 0, batch = 0, dirs = 1;
  bool reverseOnly = false, linearBeforeReset = false;
  std::optional<double> clip;
  SmallVector<Activation> activations; // per direction, per cell function
  // Per-entry lengths when some may be shorter than `seq`: constant, or a
  // run-time [B] tensor (then masks compare against it). Neither: all full.
  SmallVector<int64_t> seqLens;
  Value runtimeSeqLens;
};

int64_t functionsPerCell(Cell cell) {
  return cell == Cell::LSTM ? 3 : cell == Cell::GRU ? 2 : 1;
}

/// Activation names with their ONNX default alpha/beta; alpha and beta
/// attributes are consumed in order by the functions that take them.
std::string readActivations(NodeContext &c, Recurrence &r) {
  int64_t perCell = functionsPerCell(r.cell);
  SmallVector<std::string> names;
  if (const auto *a = c.attr("activations"))
    for (const auto &s : a->strings())
      names.push_back(s);
  if (names.empty()) {
    SmallVector<std::string> defaults =
        r.cell == Cell::LSTM
            ? SmallVector<std::string>{"Sigmoid", "Tanh", "Tanh"}
        : r.cell == Cell::GRU ? SmallVector<std::string>{"Sigmoid", "Tanh"}
                              : SmallVector<std::string>{"Tanh"};
    for (int64_t d = 0; d < r.dirs; ++d)
      names.append(defaults);
  }
  if ((int64_t)names.size() != perCell * r.dirs)
    return fmt::format("expected {} activations, got {}", perCell * r.dirs,
                       names.size());
  SmallVector<double> alpha, beta;
  if (const auto *a = c.attr("activation_alpha"))
    alpha.assign(a->floats().begin(), a->floats().end());
  if (const auto *a = c.attr("activation_beta"))
    beta.assign(a->floats().begin(), a->floats().end());
  size_t nextAlpha = 0, nextBeta = 0;
  for (const std::string &name : names) {
    Activation act{name};
    static const llvm::StringMap<std::pair<double, double>> defaults = {
        {"Affine", {1, 0}},          {"LeakyRelu", {0.01, 0}},
        {"ThresholdedRelu", {1, 0}}, {"ScaledTanh", {1, 1}},
        {"HardSigmoid", {0.2, 0.5}}, {"Elu", {1, 0}}};
    static const llvm::StringSet<> plain = {"Relu", "Tanh", "Sigmoid",
                                            "Softsign", "Softplus"};
    auto d = defaults.find(name);
    if (d != defaults.end()) {
      act.alpha =
          nextAlpha < alpha.size() ? alpha[nextAlpha++] : d->second.first;
      bool takesBeta =
          name == "Affine" || name == "ScaledTanh" || name == "HardSigmoid";
      if (takesBeta)
        act.beta = nextBeta < beta.size() ? beta[nextBeta++] : d->second.second;
    } else if (!plain.contains(name)) {
      return "activation '" + name + "'";
    }
    r.activations.push_back(act);
  }
  return "";
}

Value activate(NNBuilder &e, const Activation &a, Value x) {
  auto k = [&](double v) { return e.k(x, v); };
  if (a.name == "Sigmoid")
    return e.sigmoid(x);
  if (a.name == "Tanh")
    return e.tanh(x);
  if (a.name == "Relu")
    return e.relu(x);
  if (a.name == "Affine")
    return e.add(e.mul(k(a.alpha), x), k(a.beta));
  if (a.name == "LeakyRelu")
    return e.select(e.less(x, k(0)), e.mul(k(a.alpha), x), x);
  if (a.name == "ThresholdedRelu")
    return e.select(e.greater(x, k(a.alpha)), x, k(0));
  if (a.name == "ScaledTanh")
    return e.mul(k(a.alpha), e.tanh(e.mul(k(a.beta), x)));
  if (a.name == "HardSigmoid")
    return e.clip(e.add(e.mul(k(a.alpha), x), k(a.beta)), 0.0, 1.0);
  if (a.name == "Elu")
    return e.select(e.less(x, k(0)), e.mul(k(a.alpha), e.sub(e.exp(x), k(1))),
                    x);
  if (a.name == "Softsign")
    return e.div(x, e.add(k(1), e.abs(x)));
  // Softplus
  return e.log(e.add(k(1), e.exp(x)));
}

/// Per-direction operands, already 2-D and transposed for `x @ w`.
struct DirectionWeights {
  Value inputT;     // [I, G*H]
  Value recurrentT; // [H, G*H]
  Value bias;       // [G*H]: Wb + Rb, except GRU-linear_before_reset's Rbh
  Value recurrentHiddenBias; // [H]: that Rbh, or null
  Value peepholes;           // [3*H] (LSTM i, o, f) or null
  Value h0, c0;              // [B, H]
};

struct State {
  Value h, c;
};

class Unroller {
public:
  Unroller(NNBuilder &e, const Recurrence &r) : e(e), c(e.c), r(r) {}

  /// One direction over all steps: Y entries [1, 1, B, H] in time order,
  /// and the final state.
  State run(const DirectionWeights &w, Value x, int64_t direction, bool reverse,
            SmallVectorImpl<Value> &ys) {
    int64_t h = r.hidden, gh = r.gates * h;
    ArrayRef<Activation> acts = ArrayRef<Activation>(r.activations)
                                    .slice(direction * functionsPerCell(r.cell),
                                           functionsPerCell(r.cell));
    // All steps' input projections at once: [S*B, I] @ [I, G*H].
    Value xFlat = e.reshape(x, {r.seq * r.batch, e.shape(x)[2]});
    Value projected = e.matmul(xFlat, w.inputT);
    if (w.bias)
      projected = e.add(projected, w.bias);
    projected = e.reshape(projected, {r.seq, r.batch, gh});

    State s{w.h0, w.c0};
    ys.assign(r.seq, Value());
    for (int64_t step = 0; step < r.seq; ++step) {
      int64_t t = reverse ? r.seq - 1 - step : step;
      Value xt = e.reshape(e.slice(projected, 0, t, t + 1), {r.batch, gh});
      State next = cell(w, acts, xt, s);
      Value y = next.h;
      if (!r.seqLens.empty() || r.runtimeSeqLens) {
        Value live = stepMask(t);
        next.h = e.select(live, next.h, s.h);
        if (next.c)
          next.c = e.select(live, next.c, s.c);
        y = e.select(live, y, e.k(y, 0));
      }
      s = next;
      ys[t] = e.reshape(y, {1, 1, r.batch, h});
    }
    return s;
  }

  /// The same over a sequence length or batch known only at run time: one
  /// loop whose iteration gathers its step of the projection. The final
  /// state, and Y as [S, 1, B, H].
  FailureOr<std::pair<State, Value>> loop(const DirectionWeights &w, Value x,
                                          int64_t direction, bool reverse) {
    int64_t h = r.hidden, gh = r.gates * h;
    ArrayRef<Activation> acts = ArrayRef<Activation>(r.activations)
                                    .slice(direction * functionsPerCell(r.cell),
                                           functionsPerCell(r.cell));
    SymInt seq = dimOf(c, x, 0), batch = dimOf(c, x, 1);
    auto i64 = [&](int64_t v) { return c.b.getI64IntegerAttr(v); };
    auto xFlat =
        reshapeSymbolic(c, x, {mulSym(c, seq, batch), i64(e.shape(x)[2])},
                        /*allowZero=*/true);
    if (failed(xFlat))
      return failure();
    Value projected = e.matmul(*xFlat, w.inputT);
    if (w.bias)
      projected = e.add(projected, w.bias);
    if (e.failed)
      return failure();
    auto steps = reshapeSymbolic(c, projected, {seq, batch, i64(gh)},
                                 /*allowZero=*/true);
    if (failed(steps))
      return failure();
    OpBuilder &b = c.b;
    Location loc = c.loc;
    Value count = i64Value(b, loc, seq);
    SmallVector<Value> inits{w.h0};
    if (w.c0)
      inits.push_back(w.c0);
    auto results = importRunTimeRecurrence(
        c, count, inits, /*stacked=*/1, reverse,
        [&](Value index, ValueRange carried) -> FailureOr<SmallVector<Value>> {
          Value t = index;
          if (reverse)
            t = arith::SubIOp::create(
                b, loc,
                arith::SubIOp::create(
                    b, loc, count, arith::ConstantOp::create(b, loc, i64(1))),
                index);
          Value at = tensor::FromElementsOp::create(
              b, loc, RankedTensorType::get({}, b.getI64Type()), ValueRange{t});
          auto xt = c.make<GatherOp>({*steps, at}, {c.named("axis", i64(0))});
          if (failed(xt))
            return failure();
          State s{carried[0], carried.size() > 1 ? carried[1] : Value()};
          State next = cell(w, acts, *xt, s);
          if (e.failed)
            return failure();
          SmallVector<Value> out{next.h};
          if (next.c)
            out.push_back(next.c);
          out.push_back(next.h);
          return out;
        },
        // Y's rows [B, H]: a run-time batch is known before the loop.
        isa<Value>(batch) ? SmallVector<Value>{cast<Value>(batch)}
                          : SmallVector<Value>{});
    if (failed(results))
      return failure();
    State last{(*results)[0], w.c0 ? (*results)[1] : Value()};
    auto y = reshapeSymbolic(c, results->back(), {seq, i64(1), batch, i64(h)},
                             /*allowZero=*/true);
    if (failed(y))
      return failure();
    return std::make_pair(last, *y);
  }

private:
  NNBuilder &e;
  NodeContext &c;
  const Recurrence &r;

  Value gate(Value v, int64_t index) {
    return e.slice(v, 1, index * r.hidden, (index + 1) * r.hidden);
  }
  Value clipped(Value v) { return r.clip ? e.clip(v, -*r.clip, *r.clip) : v; }

  /// [B, 1] i1: which batch entries are still inside their sequence at t.
  Value stepMask(int64_t t) {
    if (r.runtimeSeqLens) {
      Value lens = r.runtimeSeqLens;
      return e.reshape(e.greater(lens, e.k(lens, t)), {r.batch, 1});
    }
    SmallVector<bool> live;
    for (int64_t len : r.seqLens)
      live.push_back(t < len);
    auto type = RankedTensorType::get({r.batch, 1}, c.b.getI1Type());
    return c.constant(
        cast<ElementsAttr>(DenseElementsAttr::get(type, ArrayRef(live))));
  }

  State cell(const DirectionWeights &w, ArrayRef<Activation> acts, Value xt,
             State s) {
    switch (r.cell) {
    case Cell::RNN:
      return {
          activate(e, acts[0], clipped(e.add(xt, e.matmul(s.h, w.recurrentT)))),
          Value()};
    case Cell::GRU:
      return gru(w, acts, xt, s);
    case Cell::LSTM:
      return lstm(w, acts, xt, s);
    }
    return {};
  }

  // Gates z, r, h.
  State gru(const DirectionWeights &w, ArrayRef<Activation> acts, Value xt,
            State s) {
    int64_t h = r.hidden;
    Value zr = r.linearBeforeReset
                   ? e.matmul(s.h, w.recurrentT)
                   : e.matmul(s.h, e.slice(w.recurrentT, 1, 0, 2 * h));
    Value z = activate(e, acts[0], clipped(e.add(gate(xt, 0), gate(zr, 0))));
    Value reset =
        activate(e, acts[0], clipped(e.add(gate(xt, 1), gate(zr, 1))));
    Value candidate;
    if (r.linearBeforeReset) {
      Value hr = gate(zr, 2);
      if (w.recurrentHiddenBias)
        hr = e.add(hr, w.recurrentHiddenBias);
      candidate = e.add(gate(xt, 2), e.mul(reset, hr));
    } else {
      Value rh = e.slice(w.recurrentT, 1, 2 * h, 3 * h);
      candidate = e.add(gate(xt, 2), e.matmul(e.mul(reset, s.h), rh));
    }
    candidate = activate(e, acts[1], clipped(candidate));
    // (1 - z) * candidate + z * h_prev
    Value hNext = e.add(e.mul(e.sub(e.k(z, 1), z), candidate), e.mul(z, s.h));
    return {hNext, Value()};
  }

  // Gates i, o, f, c; peepholes i, o, f.
  State lstm(const DirectionWeights &w, ArrayRef<Activation> acts, Value xt,
             State s) {
    Value g = e.add(xt, e.matmul(s.h, w.recurrentT));
    auto peep = [&](Value pre, int64_t index, Value cell) {
      if (!w.peepholes)
        return pre;
      Value p =
          e.slice(w.peepholes, 0, index * r.hidden, (index + 1) * r.hidden);
      return e.add(pre, e.mul(p, cell));
    };
    Value i = activate(e, acts[0], clipped(peep(gate(g, 0), 0, s.c)));
    Value f = activate(e, acts[0], clipped(peep(gate(g, 2), 2, s.c)));
    Value candidate = activate(e, acts[1], clipped(gate(g, 3)));
    Value cNext = e.add(e.mul(f, s.c), e.mul(i, candidate));
    Value o = activate(e, acts[0], clipped(peep(gate(g, 1), 1, cNext)));
    return {e.mul(o, activate(e, acts[2], cNext)), cNext};
  }
};

std::string readRecurrence(NodeContext &c, Cell cell, Recurrence &r) {
  r.cell = cell;
  r.gates = cell == Cell::LSTM ? 4 : cell == Cell::GRU ? 3 : 1;
  std::string direction = c.attrString("direction", "forward");
  if (direction == "bidirectional")
    r.dirs = 2;
  else if (direction == "reverse")
    r.reverseOnly = true;
  else if (direction != "forward")
    return "direction '" + direction + "'";
  r.hidden = c.attrInt("hidden_size", 0);
  if (c.hasAttr("clip"))
    r.clip = c.attrFloat("clip", 0);
  r.linearBeforeReset = c.attrInt("linear_before_reset", 0) != 0;
  if (c.attrInt("input_forget", 0))
    return "input_forget";
  return readActivations(c, r);
}

Results importRecurrent(NodeContext &c, Cell cell) {
  Recurrence r;
  std::string problem = readRecurrence(c, cell, r);
  if (!problem.empty())
    return c.unsupported(problem);
  if (!c.hasInput(0) || !c.hasInput(1) || !c.hasInput(2))
    return c.fail("needs X, W and R");
  NNBuilder e(c);
  bool batchFirst = c.attrInt("layout", 0) != 0;
  Value x = c.input(0);
  if (e.rank(x) != 3)
    return c.fail("X must be 3-D");
  if (batchFirst)
    x = e.transpose(x, {1, 0, 2});
  r.seq = e.shape(x)[0];
  r.batch = e.shape(x)[1];
  int64_t inputSize = e.shape(x)[2];
  // A sequence length or batch known only at run time is a loop over the
  // steps (ImportLoopRunTime.cpp).
  bool runTime = ShapedType::isDynamic(r.seq) || ShapedType::isDynamic(r.batch);
  if (ShapedType::isDynamic(inputSize))
    return c.unsupported(
        fmt::format("{} over an input size known only at run time (give it "
                    "with --input-shape)",
                    c.opType()));
  ArrayRef<int64_t> wShape = e.shape(c.input(1));
  if (r.hidden == 0 && wShape.size() == 3)
    r.hidden = wShape[1] / r.gates;
  int64_t h = r.hidden, gh = r.gates * h;
  if (wShape != ArrayRef<int64_t>({r.dirs, gh, inputSize}) ||
      e.shape(c.input(2)) != ArrayRef<int64_t>({r.dirs, gh, h}))
    return c.fail(fmt::format("W must be [{0}, {1}, {2}] and R [{0}, {1}, {3}]",
                              r.dirs, gh, inputSize, h));

  if (c.hasInput(4)) {
    if (e.rank(c.input(4)) != 1)
      return c.fail("sequence_lens must be 1-D");
    int64_t entries = e.shape(c.input(4))[0];
    if (!ShapedType::isDynamic(entries) && !ShapedType::isDynamic(r.batch) &&
        entries != r.batch)
      return c.fail("sequence_lens must have one entry per batch entry");
    auto lens = c.constantInts(4);
    bool allFull =
        lens && llvm::all_of(*lens, [&](int64_t l) { return l == r.seq; });
    if (!allFull && runTime)
      return c.unsupported("sequence_lens over a sequence length or batch "
                           "known only at run time");
    if (!allFull) {
      // A reverse pass would start at each entry's own last step.
      if (r.dirs == 2 || r.reverseOnly)
        return c.unsupported("sequence_lens in the reverse direction, unless "
                             "constant and equal to the sequence length");
      if (lens)
        r.seqLens.assign(lens->begin(), lens->end());
      else
        r.runtimeSeqLens = c.input(4);
    }
  }

  // Initial states are [dirs, B, H] ([B, dirs, H] batch-first).
  // An initial state of a static batch against a run-time one in X would
  // be broadcast along it, where ONNX wants the same batch.
  for (size_t i : {5, 6})
    if (c.hasInput(i) && ShapedType::isDynamic(r.batch) &&
        e.rank(c.input(i)) == 3 &&
        !ShapedType::isDynamic(e.shape(c.input(i))[batchFirst ? 0 : 1]))
      return c.unsupported(fmt::format(
          "{} with {} of a static batch and X of a batch known only at run "
          "time (give it with --input-shape)",
          c.opType(), i == 5 ? "initial_h" : "initial_c"));
  auto initialState = [&](size_t i, int64_t d) -> Value {
    if (!c.hasInput(i) && ShapedType::isDynamic(r.batch)) {
      // Zeros [B, H] for a run-time B.
      FailureOr<Value> zeros =
          expandSymbolic(c, e.splat({1, h}, e.elementType(x), 0),
                         {dimOf(c, x, 1), c.b.getI64IntegerAttr(h)});
      if (failed(zeros))
        return e.failed = true, Value();
      return *zeros;
    }
    if (!c.hasInput(i))
      return e.splat({r.batch, h}, e.elementType(x), 0);
    Value v = c.input(i);
    if (batchFirst)
      v = e.transpose(v, {1, 0, 2});
    return e.reshape(e.slice(v, 0, d, d + 1), {r.batch, h});
  };
  auto perDirection = [&](Value v, int64_t d, ArrayRef<int64_t> shape) {
    return e.reshape(e.slice(v, 0, d, d + 1), shape);
  };

  SmallVector<SmallVector<Value>> ys(r.dirs);
  SmallVector<Value> lastH, lastC;
  Unroller unroller(e, r);
  for (int64_t d = 0; d < r.dirs && !e.failed; ++d) {
    DirectionWeights w;
    w.inputT =
        e.transpose(perDirection(c.input(1), d, {gh, inputSize}), {1, 0});
    w.recurrentT = e.transpose(perDirection(c.input(2), d, {gh, h}), {1, 0});
    if (c.hasInput(3)) {
      Value b = perDirection(c.input(3), d, {2 * gh});
      Value wb = e.slice(b, 0, 0, gh), rb = e.slice(b, 0, gh, 2 * gh);
      if (cell == Cell::GRU && r.linearBeforeReset) {
        // Rbh is applied inside reset * (...), not to the projection.
        w.recurrentHiddenBias = e.slice(rb, 0, 2 * h, 3 * h);
        rb = e.concat(
            {e.slice(rb, 0, 0, 2 * h), e.splat({h}, e.elementType(x), 0)}, 0);
      }
      w.bias = e.add(wb, rb);
    }
    if (cell == Cell::LSTM && c.hasInput(7))
      w.peepholes = perDirection(c.input(7), d, {3 * h});
    w.h0 = initialState(5, d);
    if (cell == Cell::LSTM)
      w.c0 = initialState(6, d);
    bool reverse = r.reverseOnly || d == 1;
    State last;
    if (runTime) {
      auto looped = unroller.loop(w, x, d, reverse);
      if (failed(looped))
        return failure();
      last = looped->first;
      ys[d] = {looped->second};
    } else {
      last = unroller.run(w, x, d, reverse, ys[d]);
    }
    lastH.push_back(e.reshape(last.h, {1, r.batch, h}));
    if (cell == Cell::LSTM)
      lastC.push_back(e.reshape(last.c, {1, r.batch, h}));
  }
  if (e.failed)
    return failure();

  // Y is [S, dirs, B, H] ([B, S, dirs, H] batch-first).
  Value y, yh, yc;
  if (c.hasOutput(0)) {
    SmallVector<Value> perDir;
    for (auto &steps : ys)
      perDir.push_back(e.concat(steps, 0));
    y = e.concat(perDir, 1);
    if (batchFirst)
      y = e.transpose(y, {2, 0, 1, 3});
  }
  auto stateOutput = [&](ArrayRef<Value> states) {
    Value v = e.concat(states, 0);
    return batchFirst ? e.transpose(v, {1, 0, 2}) : v;
  };
  if (c.hasOutput(1))
    yh = stateOutput(lastH);
  if (cell == Cell::LSTM && c.hasOutput(2))
    yc = stateOutput(lastC);
  return e.done({y, yh, yc});
}
} // namespace

void mlir::kiln::onnx_import::registerRecurrentHandlers(
    llvm::StringMap<OpHandler> &t) {
  t["RNN"] = [](NodeContext &c) { return importRecurrent(c, Cell::RNN); };
  t["GRU"] = [](NodeContext &c) { return importRecurrent(c, Cell::GRU); };
  t["LSTM"] = [](NodeContext &c) { return importRecurrent(c, Cell::LSTM); };
}
