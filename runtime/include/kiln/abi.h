/*
 * The binary contract between a Kiln artifact and the Kiln runtime.
 *
 * An artifact is a shared library that exports exactly one symbol,
 * KILN_ARTIFACT_SYMBOL: a function returning a pointer to a constant
 * kiln_artifact_descriptor. The first two fields (magic, abi_version) never
 * move, so a runtime can reject an artifact of another ABI version before it
 * trusts the rest of the layout. Any change to these structs bumps
 * KILN_ABI_VERSION.
 *
 * The compiler (backends/common) emits these structs as LLVM IR constants; the
 * runtime reads them. Keep both in step with this header.
 */
#ifndef KILN_ABI_H
#define KILN_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KILN_ARTIFACT_MAGIC 0x4E4C494Bu /* "KILN" little-endian */
#define KILN_ABI_VERSION 6u
#define KILN_ARTIFACT_SYMBOL "kiln_artifact"
/* ABI 6: the section holding the weights, weights_size bytes at a file
 * offset that is a multiple of KILN_ALIGNMENT. dlopen does not load it
 * (no program header covers it); the runtime maps it read-only from the
 * file once per model and passes it as kiln_runtime_callbacks.weights, so
 * the weights never pass through the compiler's code generator and may be
 * larger than what RIP-relative addressing reaches (2 GiB). */
#define KILN_WEIGHTS_SECTION ".kiln.weights"
/* Alignment of the arena, of every buffer planned in it, and of weights. */
#define KILN_ALIGNMENT 64

/* Element types, numbered as ONNX's TensorProto.DataType. */
typedef enum kiln_dtype {
  KILN_DTYPE_UNDEFINED = 0,
  KILN_DTYPE_F32 = 1,
  KILN_DTYPE_U8 = 2,
  KILN_DTYPE_I8 = 3,
  KILN_DTYPE_U16 = 4,
  KILN_DTYPE_I16 = 5,
  KILN_DTYPE_I32 = 6,
  KILN_DTYPE_I64 = 7,
  KILN_DTYPE_STRING = 8, /* elements are `const char *`, see below */
  KILN_DTYPE_BOOL = 9,
  KILN_DTYPE_F16 = 10,
  KILN_DTYPE_F64 = 11,
  KILN_DTYPE_U32 = 12,
  KILN_DTYPE_U64 = 13,
  KILN_DTYPE_BF16 = 16,
  /* Not dtypes: they make every int32 a valid kiln_dtype value, so that
   * the runtime may check (and refuse) any value a caller passes. */
  KILN_DTYPE_MIN_ENUM_ = -0x7fffffff - 1,
  KILN_DTYPE_MAX_ENUM_ = 0x7fffffff
} kiln_dtype;

/* A string tensor (KILN_DTYPE_STRING) holds one `const char *` per element,
 * pointing to NUL-terminated UTF-8 text; a NULL element reads as "". The
 * pointers in an input tensor must stay valid during the run. Strings that a
 * run creates live in memory from kiln_runtime_callbacks.alloc; the runtime
 * copies every string of an output into storage the output tensor owns. */

/* One model input or output: dense, row-major, no padding.
 *
 * An output dim may be -1: its extent is computed by the run (for example a
 * Reshape to a shape that is an input value). Such a "dynamic output" is not
 * written to a caller buffer: its outputs[] slot points to an int64_t record
 * of 1 + rank entries that the entry point fills with the data's address
 * followed by the rank extents. The data lives in memory from
 * kiln_runtime_callbacks.alloc (or in an input, the arena or the weights) and
 * stays valid until the next run; the runtime copies it into the output
 * tensor it returns.
 *
 * An input dim may be -1 too (ABI 5): a symbolic dim ("batch", "seq") whose
 * extent the caller chooses, one of the descriptor's `symbols`. Dims that
 * name the same symbol must be equal, and the extent must lie in the
 * symbol's [min, max]; the runtime checks both. Such an input's inputs[]
 * slot points to the same kind of record: {data address, dim 0, ...}. */
typedef struct kiln_tensor_desc {
  const char *name;
  int32_t dtype; /* a kiln_dtype */
  int32_t rank;
  const int64_t *shape; /* rank entries; -1 for a run-time extent */
  /* ABI 5: per dim, the index of its symbol in
   * kiln_artifact_descriptor.symbols, or -1; NULL when no dim has one.
   * Every -1 dim of an input has a symbol. */
  const int32_t *symbols;
} kiln_tensor_desc;

/* A symbolic dim of the inputs (ABI 5), with the extents it may take. */
typedef struct kiln_symbol_desc {
  const char *name; /* the ONNX dim_param, e.g. "seq" */
  int64_t min;
  int64_t max;
} kiln_symbol_desc;

/* Callbacks the runtime hands to the entry point. Generated code creates no
 * threads; it asks the runtime's pool to run loop bodies. */
typedef void (*kiln_parallel_body)(void *ctx, int64_t begin, int64_t end);
typedef struct kiln_runtime_callbacks {
  uint32_t abi_version; /* KILN_ABI_VERSION */
  uint32_t num_threads;
  void *pool;
  /* Splits [0, n) into chunks and runs body(ctx, begin, end) on each, possibly
   * in parallel; returns when every chunk is done. */
  void (*parallel_for)(void *pool, int64_t n, kiln_parallel_body body,
                       void *ctx);
  /* Passed to alloc and fail. */
  void *context;
  /* Memory for a buffer whose size is computed by the run: `bytes` aligned
   * to KILN_ALIGNMENT, valid until the next run of the session. NULL when
   * the memory is not available: the entry point returns right after, and
   * the run fails with KILN_ERROR_OUT_OF_MEMORY and a message naming the
   * sizes. */
  void *(*alloc)(void *context, uint64_t bytes);
  /* A run-time check failed (a Reshape shape that does not match, a negative
   * extent, ...): `message` names the node and the condition. The entry
   * point returns right after; the run then fails with the message. */
  void (*fail)(void *context, const char *message);

  /* String kernels (ABI 3): generated code only moves string pointers; the
   * runtime formats, parses and edits the text. Each one is called with
   * `context`; new strings come from `alloc`. */
  /* Formats n numbers of `dtype` (a kiln_dtype) at src into dst: the
   * shortest decimal that reads back as the same value for floating types
   * ("0.039187793", "1e-05", "nan", "inf", "-inf"), plain decimal for
   * integers, "1"/"0" for bool. */
  void (*strings_from_numbers)(void *context, int32_t dtype, const void *src,
                               const char **dst, int64_t n);
  /* Parses n strings into numbers of `dtype` at dst (leading/trailing
   * spaces and a '+' sign allowed; "nan", "inf", "-INF", ... for floating
   * types). On a string that is not such a number it calls fail with a
   * message that starts with `what` and returns nonzero. */
  int32_t (*strings_to_numbers)(void *context, int32_t dtype,
                                const char *const *src, void *dst, int64_t n,
                                const char *what);
  /* ONNX StringNormalizer over the n strings at src: drops the stopwords
   * (num_stopwords NUL-terminated strings packed back to back, compared
   * exactly if case_sensitive, else ignoring case), changes the case of the
   * rest (case_action 0 none, 1 lower, 2 upper; ASCII and the Unicode
   * letters of UTF-8 text) and writes them in order to dst. Returns the
   * count written; when every string is dropped it writes one "" and returns
   * 1 (dst has room for max(n, 1)). */
  int64_t (*normalize_strings)(void *context, const char *const *src, int64_t n,
                               const char **dst, int32_t case_action,
                               int32_t case_sensitive, const char *stopwords,
                               int64_t num_stopwords);

  /* GPU artifacts (ABI 4; NULL for CPU sessions). */
  /* The model's weights in device memory, uploaded once per loaded model. */
  void *device_weights;
  /* Launches kernel `kernel` (an index into kiln_gpu_program.kernels) on the
   * session's stream over grid x block threads with `shared_bytes` of
   * dynamic shared memory. `args` holds one 64-bit slot per kernel
   * parameter: a device address, an integer, or a float's bits in the low
   * bytes. Returns 0; on failure it records the error, the entry point runs
   * on (the runtime launches nothing more) and the run fails with it. */
  int32_t (*launch)(void *context, uint32_t kernel, uint32_t grid_x,
                    uint32_t grid_y, uint32_t grid_z, uint32_t block_x,
                    uint32_t block_y, uint32_t block_z, uint32_t shared_bytes,
                    const uint64_t *args);

  /* ABI 6: the model's weights, weights_size bytes mapped read-only from the
   * artifact's KILN_WEIGHTS_SECTION (host memory, CPU and GPU artifacts
   * alike; a GPU artifact's kernels read device_weights). NULL when
   * weights_size is 0. */
  const void *weights;
} kiln_runtime_callbacks;

/* ---- GPU artifacts (ABI 4) ----
 * The host code of a GPU artifact runs on the CPU and only launches kernels
 * through kiln_runtime_callbacks.launch; its inputs, outputs, arena and
 * weights pointers are device addresses. The descriptor's `gpu` program
 * holds the device image and the kernel table. */
typedef enum kiln_gpu_platform {
  KILN_GPU_NONE = 0,
  KILN_GPU_CUDA = 1,    /* image: a CUDA fatbin (cubins + PTX) */
  KILN_GPU_HIP = 2,     /* image: a clang offload bundle, a code object
                           per gfx arch */
  KILN_GPU_EMULATOR = 3 /* kernels compiled for the host CPU (`emulated`) */
} kiln_gpu_platform;

/* What the device assembler reported for a kernel on one architecture. */
typedef struct kiln_gpu_kernel_resources {
  const char *arch;      /* "sm_90a", "gfx942" */
  uint32_t registers;    /* per thread (AMD: VGPRs, AGPRs included) */
  uint32_t shared_bytes; /* static shared memory (AMD: LDS) */
  uint32_t local_bytes;  /* stack frame per thread (AMD: scratch) */
  uint32_t spill_bytes;  /* spill stores + loads (AMD: 4 per spilled VGPR) */
  uint32_t scalar_registers; /* AMD: SGPRs; 0 on CUDA */
  uint32_t occupancy; /* AMD: waves per SIMD its registers and LDS allow */
} kiln_gpu_kernel_resources;

/* The coordinates of one emulated GPU thread (KILN_GPU_EMULATOR). The
 * runtime fills the first twelve words; `barrier` returns once every thread
 * of the block has called it. */
typedef struct kiln_emulated_thread {
  uint32_t thread_id[3];
  uint32_t block_id[3];
  uint32_t block_dim[3];
  uint32_t grid_dim[3];
  void *scheduler;
  void (*barrier)(struct kiln_emulated_thread *self);
  /* A warp's PTX mma.sync (every thread of the block calls it together):
   * slots[0..3] hold the lane's A fragment, [4..5] B, [6..9] the f32 C
   * accumulators as bits, in the PTX ISA's fragment layout; on return
   * [6..9] hold D. `kind` is a KILN_EMULATED_MMA_*, or a
   * KILN_EMULATED_MFMA_* for an AMD wave's MFMA (64 lanes). */
  void (*mma)(struct kiln_emulated_thread *self, uint32_t kind,
              uint32_t *slots);
} kiln_emulated_thread;

#define KILN_EMULATED_MMA_F16_M16N8K16 0
#define KILN_EMULATED_MMA_BF16_M16N8K16 1
#define KILN_EMULATED_MMA_TF32_M16N8K8 2
/* AMD MFMA of a wave of 64 (CDNA layout): A words from slots[0], B from
 * slots[4] (one f32, or four 16-bit values as two words), C/D in [6..9]. */
#define KILN_EMULATED_MFMA_F32_16X16X4 3
#define KILN_EMULATED_MFMA_F16_16X16X16 4
#define KILN_EMULATED_MFMA_BF16_16X16X16 5
/* gpu.shuffle xor, collective over the block like the MMAs: slots[0] the
 * lane's 32-bit value, [1] the xor offset, [2] the width (lanes of a
 * group); on return [6] the value of lane (lane ^ offset) of the group and
 * [7] 1 if that lane is in the group (else [6] is the lane's own value). */
#define KILN_EMULATED_SHUFFLE_XOR 6
/* PTX ldmatrix.sync.aligned.m8n8.x4(.trans).b16, collective like the MMAs:
 * slots[0..1] the lane's row address (low word first; lane l gives row
 * l % 8 of matrix l / 8); on return [6..9] one 32-bit register of each
 * matrix: its row l / 4 at columns 2(l % 4), 2(l % 4) + 1, or with .trans
 * its rows 2(l % 4), 2(l % 4) + 1 at column l / 4. */
#define KILN_EMULATED_LDMATRIX_X4 7
#define KILN_EMULATED_LDMATRIX_X4_TRANS 8

/* A kernel compiled for the host: args[i] points to parameter i's slot. */
typedef void (*kiln_emulated_kernel_fn)(void *const *args,
                                        kiln_emulated_thread *thread);

#define KILN_GPU_KERNEL_BARRIERS 1u /* the kernel synchronizes its block */

typedef struct kiln_gpu_kernel {
  const char *name;       /* the kernel's symbol in the device image */
  const char *onnx_nodes; /* the ONNX nodes it computes, comma-separated */
  uint32_t num_params;    /* 64-bit slots a launch passes */
  uint32_t flags;         /* KILN_GPU_KERNEL_* */
  uint32_t shared_bytes;  /* static shared memory it declares */
  uint32_t num_resources;
  const kiln_gpu_kernel_resources *resources; /* per architecture */
  kiln_emulated_kernel_fn emulated; /* KILN_GPU_EMULATOR only, else NULL */
  /* The launch shape, when it is fixed at compile time (0: set by the run). */
  uint32_t grid[3];
  uint32_t block[3];
} kiln_gpu_kernel;

typedef struct kiln_gpu_program {
  uint32_t platform; /* a kiln_gpu_platform */
  uint32_t num_kernels;
  const kiln_gpu_kernel *kernels;
  const char *archs; /* the image's architectures, "sm_80,sm_90a" */
  const void *image; /* NULL for the emulator */
  uint64_t image_size;
  /* ABI 6: no weights pointer; the runtime uploads the weights it mapped
   * from KILN_WEIGHTS_SECTION once per model. */
} kiln_gpu_program;

/* Runs the model. inputs/outputs hold one data pointer per tensor, in
 * descriptor order, each aligned to at least the element size. arena points
 * to arena_size bytes aligned to KILN_ALIGNMENT, owned by the caller and
 * reused across runs. Returns 0 on success. */
typedef int32_t (*kiln_entry_fn)(void *const *inputs, void *const *outputs,
                                 void *arena,
                                 const kiln_runtime_callbacks *runtime);

typedef struct kiln_artifact_descriptor {
  uint32_t magic;              /* KILN_ARTIFACT_MAGIC */
  uint32_t abi_version;        /* KILN_ABI_VERSION */
  const char *target_triple;   /* e.g. "x86_64-unknown-linux-gnu" */
  const char *target_cpu;      /* e.g. "znver5" */
  const char *target_features; /* LLVM feature string, e.g. "+avx2,+fma" */
  const char *model_name;
  const char *producer; /* e.g. "kiln 0.1.0" */
  uint32_t num_inputs;
  uint32_t num_outputs;
  const kiln_tensor_desc *inputs;
  const kiln_tensor_desc *outputs;
  uint64_t arena_size;   /* bytes */
  uint64_t weights_size; /* bytes in KILN_WEIGHTS_SECTION of the file */
  kiln_entry_fn entry;
  /* Floating-point operations of one run in its matmuls and convolutions
   * (2 per multiply-add, as benchmarks count GFLOP); 0 if unknown. ABI 3. */
  uint64_t flops;
  /* GPU artifacts: the device program (ABI 4). NULL for CPU artifacts. For
   * a GPU artifact arena_size is the device arena of one session. */
  const kiln_gpu_program *gpu;
  /* ABI 5: the symbolic dims of the inputs. Run-time sized buffers come
   * from kiln_runtime_callbacks.alloc; arena_size covers the rest. */
  uint32_t num_symbols;
  const kiln_symbol_desc *symbols;
} kiln_artifact_descriptor;

typedef const kiln_artifact_descriptor *(*kiln_artifact_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* KILN_ABI_H */
