// The schedule for contractions: outputs whose element is (a function of)
// one sum over products, out[..] = f(sum_k x(.., k) * y(.., k)), which is
// what nn.dense, nn.matmul, nn.batch_matmul, nn.conv2d and
// nn.conv2d_transpose compute, with any elementwise epilogue fused after them
// (bias, activation).
//
// The naive loop nest recomputes addresses and reloads both operands for
// every multiply-add. This schedule is the blocked, packed one of
// high-performance GEMM libraries, expressed in kernel IR:
//
// - The output axes split into the column axis (mentioned by y only), row
//   axes (by x only) and batch axes (the rest). Several axes mentioned by y
//   alone can be the columns together when they are the output's last axes
//   and y reads them as one contiguous run: a 1x1 convolution at stride 1
//   then has its output pixels (oh, ow) as columns and its output channels
//   as rows, so that a tile stores whole vectors along a channel's plane.
//   They can be too when y does not read them contiguously but packing them
//   copies no more than y's input holds (a 1x1 convolution at stride 2);
//   y is then packed.
//   The operand whose columns are the output's last axis is preferred as y.
//   Where packing them would copy y's input many times over (a strided
//   window: a 3-channel stem at stride 2) and the product is short, the
//   output's last axis alone is the column axis (the map's rows are batch
//   axes), and each task packs the panel it computes just before computing
//   it ("window panels"): the tiles then store whole vectors along an
//   output row, where output channels as columns would scatter each tile
//   across planes at a cost comparable to the short product itself.
// - y is packed into a workspace, once per call, in column panels: for each
//   panel of `columns` consecutive columns, the panel's values for every k
//   are contiguous (the panel's tail past the last column is zero). x is
//   read in place when it is a plain load (a dense layer's data, an
//   unpadded convolution's input), along its own k axes so that its address
//   is a sum of strides; when reading it costs more (a padded convolution's
//   window: selects and index arithmetic) it is packed too, in blocks of
//   `rows` rows with each row's k values contiguous: the im2col of a
//   convolution, computed once instead of per multiply-add. (The compiler's
//   pad_convolutions pass pads a convolution's input beforehand, so that
//   only convolutions it leaves, float16 ones say, pack their windows.)
// - Each task of the parallel loop takes a batch, a column panel and a run of
//   row blocks, and computes each `rows` x `columns` block of the output in a
//   register tile: per k, `rows` broadcast values of x times one row of the
//   panel, accumulated in place. Rows past the end are clamped to the last
//   row (computed again, never stored), so every block has the same shape.
//   When all of y's panels fit in a core's cache together (192 KiB), a task
//   takes a run of row blocks instead and sweeps every panel for each, so
//   that x is read once; a packed x is then packed one block at a time, by
//   the task, just before its panels read it.
// - The epilogue (the rest of the output expression, with the sum replaced
//   by the tile's value) runs when a block is stored.
//
// Few rows (a matrix-vector product: an LSTM step's dense layers, a batch of
// one) take another schedule, because packing a y that is not kept costs
// more than the product itself there and a tile of `rows` rows would mostly
// compute clamped rows again. When both operands are contiguous along k (nn.dense's data and
// weight, nn.batch_matmul's default layout), each task takes a few rows and
// a few columns and accumulates their dot products along k in vector
// registers, reading y in place exactly once per row block: for one row,
// every weight is read once per call, at the memory system's pace. The
// lanes are summed when the block is stored, through the epilogue.
//
// Nothing here is specific to a CPU: the tile shape and the number of tasks
// come from the target.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kernels/compute/pad_schedule.h"
#include "kernels/compute/tensor_expr.h"

namespace relay::kernels {

struct ContractionTiling {
  int64_t rows = 6;            // register tile rows (broadcast values of x)
  int64_t column_bytes = 128;  // register tile row width: a few of the target's vectors
  // A wider tile row for long products over many rows whose columns it
  // tiles exactly (0: none), where the target has registers enough for
  // `rows` of them as accumulators.
  int64_t wide_column_bytes = 0;
  // Another count of rows for the narrow tile (0: none), taken where it
  // divides the rows exactly and `rows` would leave many empty.
  int64_t exact_rows = 0;
  // More rows for the narrow tile (0: none) where y is read in place.
  int64_t tall_rows = 0;
  int64_t parallel_tasks = 16;  // split the work into at least this many tasks when it can
  int64_t vector_bytes = 32;    // the target's vector width: the small-rows schedule's lanes
};

// At most this many rows take the small-rows schedule. From about 16 rows
// the packed schedule is faster (by 1.3-2x at 16-64 rows of a transformer's
// and a perceptron's dense layers) once a constant weight's panels are kept
// rather than packed per call (kir::Kernel's derived_workspace).
inline constexpr int64_t kSmallRowsLimit = 8;

// The kernel computing `output` (whose shape must be constant) with the
// contraction schedule, with a workspace parameter per packed operand (x's
// first when it is packed, then y's); nothing when `output` is not a
// contraction this schedule serves
// (no single floating-point sum of products, a column axis that both
// operands mention, or too little work to pay for packing).
//
// With `padding` (of output's shape), the kernel's output is `output`
// padded (a convolution's result with its bias and activation, padded for
// the next convolution): the tiles store each element at its padded
// position and a loop fills the padding first. Nothing then also where the
// tiles could not store so (few rows, or flattened columns that the padding
// splits).
std::optional<kir::Kernel> BuildContractionKernel(const std::string& name,
                                                  const std::vector<kir::Buffer>& inputs,
                                                  const TensorExpr& output,
                                                  const ContractionTiling& tiling,
                                                  const ConstantPadding* padding = nullptr);

}  // namespace relay::kernels
