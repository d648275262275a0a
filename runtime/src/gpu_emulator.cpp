// The GPU emulator: runs the kernels of a `--gpu-emulate` artifact (the same
// block/thread-mapped kernels the device gets, compiled for this CPU) with
// CUDA's execution model. Device memory is host memory. A kernel without
// barriers or shared memory runs its blocks in parallel on the session's
// pool, each block's threads one after another. A kernel with barriers runs
// one block at a time, each of its threads a fiber (ucontext) with its own
// stack: a barrier switches to the next thread of the block, and the block
// goes on once every thread has arrived. A block whose threads disagree on
// the barriers they reach (one returns while others wait) is an error, as
// it is undefined behaviour on a GPU.
#include "aligned_buffer.h"
#include "gpu_device.h"
#include "status.h"
#include "thread_pool.h"

#include <array>
#include <chrono>
#include <cstring>
#include <sys/mman.h>
#include <ucontext.h>

namespace kiln::rt {
namespace {

// Enough for the scratch buffers a kernel thread keeps on its stack
// (kiln-privatize-parallel-allocs allows 256 KiB); pages are only touched
// when used.
constexpr size_t kFiberStackBytes = 1u << 20;

struct Fiber {
  ucontext_t context;
  kiln_emulated_thread thread;
  void *stack = nullptr;
  bool done = false;
  bool waiting = false;
};

constexpr int kMmaSlots = 10; // A 4, B 2, C/D 4 words (abi.h)

float halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h >> 15) << 31, exponent = (h >> 10) & 0x1f,
           mantissa = h & 0x3ff, bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000 | (mantissa << 13);
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;
  } else { // subnormal: normalize
    int shift = 0;
    while (!(mantissa & 0x400)) {
      mantissa <<= 1;
      ++shift;
    }
    bits = sign | (uint32_t(113 - shift) << 23) | ((mantissa & 0x3ff) << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

float wordToFloat(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// D = A B + C for one lane of a warp, from the 32 lanes' fragments in the
// PTX ISA's layout (group g = lane / 4, thread t = lane % 4): m16n8k16
// f16/bf16 (A: rows g, g+8 at columns 2t, 2t+1 and 2t+8, 2t+9; B: rows
// 2t, 2t+1, 2t+8, 2t+9 at column g) and m16n8k8 tf32 (A: rows g, g+8 at
// columns t, t+4; B: rows t, t+4 at column g). C/D: rows g, g+8 at columns
// 2t, 2t+1.
void computeMma(uint32_t kind, const std::array<uint32_t, kMmaSlots> *warp,
                size_t lane, uint32_t *slots) {
  float a[16][16] = {}, b[16][8] = {};
  int depth = kind == KILN_EMULATED_MMA_TF32_M16N8K8 ? 8 : 16;
  auto unpack = [&](uint32_t word, int half) {
    uint16_t bits = uint16_t(half ? word >> 16 : word & 0xffff);
    return kind == KILN_EMULATED_MMA_F16_M16N8K16
               ? halfToFloat(bits)
               : wordToFloat(uint32_t(bits) << 16);
  };
  for (int l = 0; l < 32; ++l) {
    const std::array<uint32_t, kMmaSlots> &w = warp[l];
    int g = l / 4, t = l % 4;
    if (depth == 8) {
      a[g][t] = wordToFloat(w[0]);
      a[g + 8][t] = wordToFloat(w[1]);
      a[g][t + 4] = wordToFloat(w[2]);
      a[g + 8][t + 4] = wordToFloat(w[3]);
      b[t][g] = wordToFloat(w[4]);
      b[t + 4][g] = wordToFloat(w[5]);
      continue;
    }
    for (int h = 0; h < 2; ++h) {
      a[g][2 * t + h] = unpack(w[0], h);
      a[g + 8][2 * t + h] = unpack(w[1], h);
      a[g][2 * t + 8 + h] = unpack(w[2], h);
      a[g + 8][2 * t + 8 + h] = unpack(w[3], h);
      b[2 * t + h][g] = unpack(w[4], h);
      b[2 * t + 8 + h][g] = unpack(w[5], h);
    }
  }
  int g = int(lane) / 4, t = int(lane) % 4;
  for (int e = 0; e < 4; ++e) {
    int row = g + (e >= 2 ? 8 : 0), col = 2 * t + e % 2;
    float d = wordToFloat(slots[6 + e]);
    for (int k = 0; k < depth; ++k)
      d += a[row][k] * b[k][col];
    std::memcpy(&slots[6 + e], &d, sizeof d);
  }
}

// One lane's ldmatrix.x4 registers from the rows its warp's lanes point
// to (lane 8r + j: row j of matrix r): row l / 4 at columns 2t, 2t + 1 (t
// = l % 4), or transposed, rows 2t and 2t + 1 at column l / 4.
void loadMatrices(bool transpose, const std::array<uint32_t, kMmaSlots> *warp,
                  size_t lane, uint32_t *slots) {
  auto row = [&](size_t from) {
    uint64_t address = uint64_t(warp[from][1]) << 32 | warp[from][0];
    return reinterpret_cast<const unsigned char *>(uintptr_t(address));
  };
  size_t g = lane / 4, t = lane % 4;
  for (size_t r = 0; r < 4; ++r) {
    uint32_t word;
    if (!transpose) {
      std::memcpy(&word, row(8 * r + g) + 4 * t, sizeof word);
    } else {
      uint16_t lo, hi;
      std::memcpy(&lo, row(8 * r + 2 * t) + 2 * g, sizeof lo);
      std::memcpy(&hi, row(8 * r + 2 * t + 1) + 2 * g, sizeof hi);
      word = uint32_t(hi) << 16 | lo;
    }
    slots[6 + r] = word;
  }
}

// D = A B + C for one lane of an AMD wave (64 lanes), from the lanes'
// fragments in the CDNA layout: with kpl = K / 4 values per lane, lane l
// holds A[l % 16][kpl * (l / 16) + e] and B[kpl * (l / 16) + e][l % 16];
// D element e of lane l is D[4 * (l / 16) + e][l % 16].
void computeMfma(uint32_t kind, const std::array<uint32_t, kMmaSlots> *wave,
                 size_t lane, uint32_t *slots) {
  float a[16][16] = {}, b[16][16] = {};
  int perLane = kind == KILN_EMULATED_MFMA_F32_16X16X4 ? 1 : 4;
  auto value = [&](const std::array<uint32_t, kMmaSlots> &w, int first, int e) {
    if (perLane == 1)
      return wordToFloat(w[first]);
    uint32_t word = w[first + e / 2];
    uint16_t bits = uint16_t(e % 2 ? word >> 16 : word & 0xffff);
    return kind == KILN_EMULATED_MFMA_F16_16X16X16
               ? halfToFloat(bits)
               : wordToFloat(uint32_t(bits) << 16);
  };
  for (int l = 0; l < 64; ++l)
    for (int e = 0; e < perLane; ++e) {
      int k = perLane * (l / 16) + e;
      a[l % 16][k] = value(wave[l], 0, e);
      b[k][l % 16] = value(wave[l], 4, e);
    }
  int depth = 4 * perLane;
  for (int e = 0; e < 4; ++e) {
    int row = 4 * (int(lane) / 16) + e, col = int(lane) % 16;
    float d = wordToFloat(slots[6 + e]);
    for (int k = 0; k < depth; ++k)
      d += a[row][k] * b[k][col];
    std::memcpy(&slots[6 + e], &d, sizeof d);
  }
}

// Runs the threads of one block as fibers.
class BlockScheduler {
public:
  ~BlockScheduler() {
    for (Fiber &fiber : fibers_)
      if (fiber.stack)
        munmap(fiber.stack, kFiberStackBytes);
  }

  // Runs `kernel` for every thread of block `blockId`. Returns "" or what
  // went wrong.
  std::string runBlock(kiln_emulated_kernel_fn kernel, void *const *params,
                       const uint32_t grid[3], const uint32_t block[3],
                       const uint32_t blockId[3]) {
    size_t count = size_t(block[0]) * block[1] * block[2];
    if (fibers_.size() < count) {
      fibers_.resize(count);
      exchange_.resize(count);
    }
    kernel_ = kernel;
    params_ = params;
    for (size_t i = 0; i < count; ++i) {
      Fiber &fiber = fibers_[i];
      if (!fiber.stack) {
        fiber.stack = mmap(nullptr, kFiberStackBytes, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (fiber.stack == MAP_FAILED) {
          fiber.stack = nullptr;
          return "out of memory for the stacks of the emulated threads";
        }
      }
      kiln_emulated_thread &t = fiber.thread;
      t.thread_id[0] = i % block[0];
      t.thread_id[1] = (i / block[0]) % block[1];
      t.thread_id[2] = i / (size_t(block[0]) * block[1]);
      for (int d = 0; d < 3; ++d) {
        t.block_id[d] = blockId[d];
        t.block_dim[d] = block[d];
        t.grid_dim[d] = grid[d];
      }
      t.scheduler = this;
      t.barrier = &BlockScheduler::barrier;
      t.mma = &BlockScheduler::mma;
      fiber.done = fiber.waiting = false;
      getcontext(&fiber.context);
      fiber.context.uc_stack.ss_sp = fiber.stack;
      fiber.context.uc_stack.ss_size = kFiberStackBytes;
      fiber.context.uc_link = &main_;
      makecontext(&fiber.context, &BlockScheduler::trampoline, 0);
    }
    // Rounds: run every thread up to its next barrier (or its end).
    size_t rounds = 0;
    while (true) {
      size_t done = 0, waiting = 0;
      for (size_t i = 0; i < count; ++i) {
        Fiber &fiber = fibers_[i];
        if (fiber.done) {
          ++done;
          continue;
        }
        fiber.waiting = false;
        current_ = &fiber;
        active_ = this;
        swapcontext(&main_, &fiber.context);
        if (fiber.waiting)
          ++waiting;
        else
          ++done;
      }
      ++rounds;
      if (done == count)
        return "";
      if (done != 0)
        return "threads of block (" + std::to_string(blockId[0]) + "," +
               std::to_string(blockId[1]) + "," + std::to_string(blockId[2]) +
               ") reached different barriers (" + std::to_string(waiting) +
               " waiting at barrier " + std::to_string(rounds) + ", " +
               std::to_string(done) + " returned)";
    }
  }

private:
  static void trampoline() {
    BlockScheduler *self = active_;
    Fiber *fiber = self->current_;
    self->kernel_(self->params_, &fiber->thread);
    fiber->done = true;
    // uc_link returns to main_.
  }

  // A warp's mma.sync (or MFMA, or shuffle): every lane leaves its
  // fragments, the block meets, each lane computes its own D from its
  // warp's fragments, and the block meets again before the exchange is
  // reused.
  static void mma(kiln_emulated_thread *thread, uint32_t kind,
                  uint32_t *slots) {
    auto *self = static_cast<BlockScheduler *>(thread->scheduler);
    size_t me = self->current_ - self->fibers_.data();
    std::copy(slots, slots + kMmaSlots, self->exchange_[me].begin());
    barrier(thread);
    if (kind == KILN_EMULATED_SHUFFLE_XOR) {
      size_t width = slots[2] ? slots[2] : 1, group = me - me % width;
      size_t from = (me % width) ^ slots[1];
      bool valid = from < width && group + from < self->exchange_.size();
      slots[6] = valid ? self->exchange_[group + from][0] : slots[0];
      slots[7] = valid;
    } else if (kind == KILN_EMULATED_LDMATRIX_X4 ||
               kind == KILN_EMULATED_LDMATRIX_X4_TRANS)
      loadMatrices(kind == KILN_EMULATED_LDMATRIX_X4_TRANS,
                   &self->exchange_[me - me % 32], me % 32, slots);
    else if (kind >= KILN_EMULATED_MFMA_F32_16X16X4)
      computeMfma(kind, &self->exchange_[me - me % 64], me % 64, slots);
    else
      computeMma(kind, &self->exchange_[me - me % 32], me % 32, slots);
    barrier(thread);
  }

  static void barrier(kiln_emulated_thread *thread) {
    auto *self = static_cast<BlockScheduler *>(thread->scheduler);
    Fiber *fiber = self->current_;
    fiber->waiting = true;
    swapcontext(&fiber->context, &self->main_);
  }

  static thread_local BlockScheduler *active_;
  std::vector<Fiber> fibers_;
  std::vector<std::array<uint32_t, kMmaSlots>> exchange_;
  ucontext_t main_;
  Fiber *current_ = nullptr;
  kiln_emulated_kernel_fn kernel_ = nullptr;
  void *const *params_ = nullptr;
};
thread_local BlockScheduler *BlockScheduler::active_ = nullptr;

class EmulatedStream : public GpuStream {
public:
  EmulatedStream(const kiln_gpu_program &program, ThreadPool *pool)
      : program_(program), pool_(pool) {}

  kiln_status copyToDevice(void *device, const void *host,
                           uint64_t bytes) override {
    std::memcpy(device, host, bytes);
    return KILN_OK;
  }
  kiln_status copyToHost(void *host, const void *device,
                         uint64_t bytes) override {
    std::memcpy(host, device, bytes);
    return KILN_OK;
  }
  kiln_status copyOnDevice(void *dst, const void *src,
                           uint64_t bytes) override {
    std::memmove(dst, src, bytes);
    return KILN_OK;
  }
  kiln_status synchronize() override { return KILN_OK; }

  kiln_status launch(uint32_t kernel, const uint32_t grid[3],
                     const uint32_t block[3], uint32_t sharedBytes,
                     const uint64_t *args) override {
    auto start = std::chrono::steady_clock::now();
    kiln_status status = run(kernel, grid, block, sharedBytes, args);
    if (timing_)
      times_.push_back({kernel, std::chrono::duration<double, std::milli>(
                                    std::chrono::steady_clock::now() - start)
                                    .count()});
    return status;
  }

  // Host time of each kernel (the emulator's "GPU time").
  void timeKernels(bool on) override { timing_ = on; }
  std::vector<KernelTime> takeKernelTimes() override {
    timing_ = false;
    return std::move(times_);
  }

private:
  kiln_status run(uint32_t kernel, const uint32_t grid[3],
                  const uint32_t block[3], uint32_t sharedBytes,
                  const uint64_t *args);
  // Blocks [begin, end) of the current launch, threads in order.
  static void runBlocks(void *ctx, int64_t begin, int64_t end);

  const kiln_gpu_program &program_;
  ThreadPool *pool_;
  BlockScheduler scheduler_;
  // The launch runBlocks works on.
  kiln_emulated_kernel_fn fn_ = nullptr;
  std::vector<void *> params_;
  uint32_t grid_[3] = {}, block_[3] = {};
  bool timing_ = false;
  std::vector<KernelTime> times_;
};

void EmulatedStream::runBlocks(void *ctx, int64_t begin, int64_t end) {
  auto *self = static_cast<EmulatedStream *>(ctx);
  kiln_emulated_thread t{};
  for (int d = 0; d < 3; ++d) {
    t.block_dim[d] = self->block_[d];
    t.grid_dim[d] = self->grid_[d];
  }
  uint64_t gx = self->grid_[0], gy = self->grid_[1];
  for (int64_t b = begin; b < end; ++b) {
    t.block_id[0] = b % gx;
    t.block_id[1] = (b / gx) % gy;
    t.block_id[2] = b / (gx * gy);
    for (uint32_t z = 0; z < self->block_[2]; ++z)
      for (uint32_t y = 0; y < self->block_[1]; ++y)
        for (uint32_t x = 0; x < self->block_[0]; ++x) {
          t.thread_id[0] = x;
          t.thread_id[1] = y;
          t.thread_id[2] = z;
          self->fn_(self->params_.data(), &t);
        }
  }
}

kiln_status EmulatedStream::run(uint32_t kernel, const uint32_t grid[3],
                                const uint32_t block[3], uint32_t sharedBytes,
                                const uint64_t *args) {
  const kiln_gpu_kernel &k = program_.kernels[kernel];
  if (!k.emulated)
    return fail(KILN_ERROR_BAD_ARTIFACT,
                describeKernel(program_, kernel) + " has no emulated code");
  uint64_t threads = uint64_t(block[0]) * block[1] * block[2];
  if (threads == 0 || threads > 1024 || sharedBytes != 0)
    return fail(KILN_ERROR_RUN_FAILED,
                describeKernel(program_, kernel) +
                    ": the emulator runs blocks of 1 to 1024 threads "
                    "without dynamic shared memory");
  params_.resize(k.num_params);
  for (uint32_t i = 0; i < k.num_params; ++i)
    params_[i] = const_cast<uint64_t *>(args + i);
  fn_ = k.emulated;
  std::memcpy(grid_, grid, sizeof grid_);
  std::memcpy(block_, block, sizeof block_);
  int64_t blocks = int64_t(grid[0]) * grid[1] * grid[2];
  bool sequential = (k.flags & KILN_GPU_KERNEL_BARRIERS) || k.shared_bytes != 0;
  if (!(k.flags & KILN_GPU_KERNEL_BARRIERS)) {
    // Shared memory is one host global: one block at a time.
    if (sequential || !pool_)
      runBlocks(this, 0, blocks);
    else
      pool_->parallelFor(blocks, &EmulatedStream::runBlocks, this);
    return KILN_OK;
  }
  for (int64_t b = 0; b < blocks; ++b) {
    uint32_t blockId[3] = {uint32_t(b % grid[0]),
                           uint32_t((b / grid[0]) % grid[1]),
                           uint32_t(b / (uint64_t(grid[0]) * grid[1]))};
    std::string problem =
        scheduler_.runBlock(fn_, params_.data(), grid, block, blockId);
    if (!problem.empty())
      return fail(KILN_ERROR_RUN_FAILED,
                  describeKernel(program_, kernel) + ": " + problem);
  }
  return KILN_OK;
}

class EmulatedDevice : public GpuDevice {
public:
  EmulatedDevice(const kiln_artifact_descriptor &descriptor,
                 const void *hostWeights)
      : program_(*descriptor.gpu) {
    // Host memory is device memory: the kernels read the model's read-only
    // mapping of the weights in place.
    weights_ = const_cast<void *>(hostWeights);
  }
  kiln_status allocate(uint64_t bytes, const char *what, void **out) override {
    *out = allocateAligned(bytes);
    if (!*out)
      return fail(KILN_ERROR_OUT_OF_MEMORY, "out of memory allocating " +
                                                std::to_string(bytes) +
                                                " bytes for the " + what);
    return KILN_OK;
  }
  void release(void *device) override { freeAligned(device); }
  kiln_status createStream(ThreadPool *pool,
                           std::unique_ptr<GpuStream> &out) override {
    out = std::make_unique<EmulatedStream>(program_, pool);
    return KILN_OK;
  }
  std::string name() const override { return "kiln GPU emulator"; }

private:
  const kiln_gpu_program &program_;
};

} // namespace

kiln_status openEmulatedDevice(const kiln_artifact_descriptor &descriptor,
                               const std::string &path, const void *hostWeights,
                               std::unique_ptr<GpuDevice> &out) {
  (void)path;
  out = std::make_unique<EmulatedDevice>(descriptor, hostWeights);
  return KILN_OK;
}

} // namespace kiln::rt
