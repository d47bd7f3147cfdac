// Kernel IR lowered to LLVM and run on the host. Expected values are
// computed in the test with plain C++ arithmetic.
#include "kernels/codegen/llvm/lower_kernel.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <limits>
#include <vector>

namespace relay::kernels::llvm_backend {
namespace {

using namespace relay::kernels::kir;

Buffer MakeBuffer(const std::string& name, DType dtype, std::vector<Expr> shape) {
  return Buffer(new BufferNode(name, dtype, std::move(shape)));
}
Var MakeVar(const std::string& name) {
  return Var(new VarNode(name));
}
Stmt For(const Var& var, const Expr& extent, ForKind kind, const Stmt& body) {
  return Stmt(new ForNode(var, extent, kind, body));
}
Stmt Store(const Buffer& buffer, const Expr& index, const Expr& value) {
  return Stmt(new StoreNode(buffer, index, value));
}

// out[i, j] = max(a[i, j] + b[j], 0) over a symbolic number of rows, with
// a parallel outer loop and a vectorised inner one.
TEST(LowerKernelTest, BroadcastAddReluOverSymbolicRows) {
  Var rows = MakeVar("rows");
  Buffer a = MakeBuffer("a", DType::kFloat32, {rows, Int(37)});
  Buffer b = MakeBuffer("b", DType::kFloat32, {Int(37)});
  Buffer out = MakeBuffer("out", DType::kFloat32, {rows, Int(37)});
  Var i = MakeVar("i"), j = MakeVar("j");
  Expr value = Binary(BinaryOp::kMaximum, Add(Load(a, FlatIndex(a, {i, j})), Load(b, j)),
                      Float(0, DType::kFloat32));
  Stmt body = For(i, rows, ForKind::kParallel,
                  For(j, Int(37), ForKind::kVectorized, Store(out, FlatIndex(out, {i, j}), value)));
  KernelEntry entry = CompileKernel(kir::Kernel{"add_relu", {a, b, out}, 1, {rows}, body});
  for (int64_t row_count : {0, 1, 5, 1000}) {
    std::vector<float> a_data(row_count * 37), b_data(37), out_data(row_count * 37, -1.0f);
    for (size_t index = 0; index < a_data.size(); ++index) a_data[index] = float(index % 13) - 6.5f;
    for (size_t index = 0; index < b_data.size(); ++index)
      b_data[index] = float(index) * 0.25f - 3.0f;
    void* buffers[] = {a_data.data(), b_data.data(), out_data.data()};
    int64_t dims[] = {row_count};
    entry(buffers, dims);
    for (int64_t row = 0; row < row_count; ++row) {
      for (int64_t column = 0; column < 37; ++column) {
        float expected = std::max(a_data[row * 37 + column] + b_data[column], 0.0f);
        ASSERT_EQ(out_data[row * 37 + column], expected) << row << "," << column;
      }
    }
  }
}

// A vectorised loop (16 lanes) reading every 2nd, 3rd or 4th element: a
// contiguous load and a shuffle, which must not touch the buffer past the
// last lane's element. The input ends where a page without access begins,
// so a read beyond it would crash the test.
TEST(LowerKernelTest, StridedVectorLoadsPickTheirLanesAndStayInTheBuffer) {
  const size_t page = size_t(sysconf(_SC_PAGESIZE));
  void* pages = mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(pages, MAP_FAILED);
  ASSERT_EQ(mprotect(static_cast<char*>(pages) + page, page, PROT_NONE), 0);
  for (int64_t stride : {2, 3, 4}) {
    const int64_t lanes = 16,
                  count = (lanes - 1) * stride + 2;  // the last lane reads element count - 1
    float* input = reinterpret_cast<float*>(static_cast<char*>(pages) + page) - count;
    for (int64_t index = 0; index < count; ++index) input[index] = float(index) * 0.5f - 3.0f;
    Buffer in = MakeBuffer("in", DType::kFloat32, {Int(count)});
    Buffer out = MakeBuffer("out", DType::kFloat32, {Int(2 * lanes)});
    Var i = MakeVar("i");
    const Expr base = Multiply(i, Int(stride));
    Stmt body =
        For(i, Int(lanes), ForKind::kVectorized,
            Stmt(new SequenceNode({Store(out, i, Load(in, base)),
                                   Store(out, Add(i, Int(lanes)), Load(in, Add(base, Int(1))))})));
    KernelEntry entry = CompileKernel(kir::Kernel{"strided", {in, out}, 1, {}, body});
    std::vector<float> results(2 * lanes, -1.0f);
    void* buffers[] = {input, results.data()};
    entry(buffers, nullptr);
    for (int64_t lane = 0; lane < lanes; ++lane) {
      EXPECT_EQ(results[lane], input[lane * stride]) << stride << " " << lane;
      EXPECT_EQ(results[lanes + lane], input[lane * stride + 1]) << stride << " " << lane;
    }
  }
  munmap(pages, 2 * page);
}

// A float sum over a short contiguous run (one vector and its horizontal
// reduction in the lowering): out[i] = sum of in[i * 16 + 3 .. + lanes),
// for 16 and 4 lanes, and 12 (not a power of two: a loop).
TEST(LowerKernelTest, SumsOfContiguousRunsMatchTheDefinition) {
  for (int64_t lanes : {16, 4, 12}) {
    Buffer in = MakeBuffer("in", DType::kFloat32, {Int(8 * 16 + 16)});
    Buffer out = MakeBuffer("out", DType::kFloat32, {Int(8)});
    Var i = MakeVar("i"), lane = MakeVar("lane");
    Expr sum(new ReduceNode(ReduceOp::kSum, {lane}, {Int(lanes)}, Float(0, DType::kFloat32),
                            Load(in, Add(Add(Multiply(i, Int(16)), Int(3)), lane))));
    KernelEntry entry = CompileKernel(kir::Kernel{
        "run_sums", {in, out}, 1, {}, For(i, Int(8), ForKind::kSerial, Store(out, i, sum))});
    std::vector<float> data(8 * 16 + 16), results(8, -1.0f);
    for (size_t index = 0; index < data.size(); ++index) data[index] = float(index % 7) - 2.5f;
    void* buffers[] = {data.data(), results.data()};
    entry(buffers, nullptr);
    for (int64_t row = 0; row < 8; ++row) {
      float expected = 0;
      for (int64_t k = 0; k < lanes; ++k) expected += data[size_t(row * 16 + 3 + k)];
      EXPECT_FLOAT_EQ(results[size_t(row)], expected) << lanes << " " << row;
    }
  }
}

int64_t FloorDivide(int64_t a, int64_t b) {
  if (b == 0) return 0;
  int64_t quotient = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) --quotient;
  return quotient;
}

TEST(LowerKernelTest, IntegerDivisionNeverTrapsAndFloorsLikeNumPy) {
  Var n = MakeVar("n");
  Buffer a = MakeBuffer("a", DType::kInt32, {n});
  Buffer b = MakeBuffer("b", DType::kInt32, {n});
  Buffer quotient = MakeBuffer("quotient", DType::kInt32, {n});
  Buffer floor_quotient = MakeBuffer("floor_quotient", DType::kInt32, {n});
  Buffer modulo = MakeBuffer("modulo", DType::kInt32, {n});
  Var i = MakeVar("i");
  Expr x = Load(a, i), y = Load(b, i);
  Stmt body =
      For(i, n, ForKind::kSerial,
          Stmt(new SequenceNode({Store(quotient, i, Binary(BinaryOp::kDivide, x, y)),
                                 Store(floor_quotient, i, Binary(BinaryOp::kFloorDivide, x, y)),
                                 Store(modulo, i, Binary(BinaryOp::kFloorMod, x, y))})));
  KernelEntry entry = CompileKernel(
      kir::Kernel{"division", {a, b, quotient, floor_quotient, modulo}, 3, {n}, body});
  const int32_t minimum = std::numeric_limits<int32_t>::min();
  std::vector<int32_t> lhs{7, -7, 7, -7, 5, 0, minimum, minimum, 9};
  std::vector<int32_t> rhs{2, 2, -2, -2, 0, 0, -1, 1, 3};
  size_t count = lhs.size();
  std::vector<int32_t> q(count), fq(count), m(count);
  void* buffers[] = {lhs.data(), rhs.data(), q.data(), fq.data(), m.data()};
  int64_t dims[] = {static_cast<int64_t>(count)};
  entry(buffers, dims);
  for (size_t index = 0; index < count; ++index) {
    int64_t a_value = lhs[index], b_value = rhs[index];
    int64_t truncated = b_value == 0 ? 0 : a_value / b_value;
    int64_t floored = FloorDivide(a_value, b_value);
    int64_t remainder = b_value == 0 ? 0 : a_value - floored * b_value;
    EXPECT_EQ(q[index], static_cast<int32_t>(static_cast<uint32_t>(truncated))) << index;
    EXPECT_EQ(fq[index], static_cast<int32_t>(static_cast<uint32_t>(floored))) << index;
    EXPECT_EQ(m[index], static_cast<int32_t>(remainder)) << index;
  }
}

TEST(LowerKernelTest, CastsSaturateAndBoolsAreBytes) {
  Buffer input = MakeBuffer("input", DType::kFloat32, {Int(5)});
  Buffer as_int = MakeBuffer("as_int", DType::kInt32, {Int(5)});
  Buffer positive = MakeBuffer("positive", DType::kBool, {Int(5)});
  Buffer as_half = MakeBuffer("as_half", DType::kFloat16, {Int(5)});
  Var i = MakeVar("i");
  Expr x = Load(input, i);
  Stmt body = For(i, Int(5), ForKind::kUnrolled,
                  Stmt(new SequenceNode(
                      {Store(as_int, i, Cast(DType::kInt32, x)),
                       Store(positive, i, Binary(BinaryOp::kGreater, x, Float(0, DType::kFloat32))),
                       Store(as_half, i, Cast(DType::kFloat16, x))})));
  KernelEntry entry =
      CompileKernel(kir::Kernel{"casts", {input, as_int, positive, as_half}, 3, {}, body});
  float values[] = {1.75f, -2.5f, std::nanf(""), 1e10f, -1e10f};
  int32_t ints[5];
  bool bools[5];
  Float16 halves[5];
  void* buffers[] = {values, ints, bools, halves};
  entry(buffers, nullptr);
  EXPECT_EQ(ints[0], 1);
  EXPECT_EQ(ints[1], -2);
  EXPECT_EQ(ints[2], 0);
  EXPECT_EQ(ints[3], std::numeric_limits<int32_t>::max());
  EXPECT_EQ(ints[4], std::numeric_limits<int32_t>::min());
  EXPECT_TRUE(bools[0]);
  EXPECT_FALSE(bools[1]);
  EXPECT_FALSE(bools[2]);
  EXPECT_EQ(halves[0].bits, Float16(1.75f).bits);
  EXPECT_EQ(halves[3].bits, 0x7c00);  // beyond float16's range: infinity
}

// Row sums through a scratch accumulator inside a parallel loop.
TEST(LowerKernelTest, ScratchAccumulatorSumsRows) {
  Var rows = MakeVar("rows"), columns = MakeVar("columns");
  Buffer input = MakeBuffer("input", DType::kFloat64, {rows, columns});
  Buffer sums = MakeBuffer("sums", DType::kFloat64, {rows});
  Buffer accumulator = MakeBuffer("accumulator", DType::kFloat64, {Int(1)});
  Var i = MakeVar("i"), j = MakeVar("j");
  Stmt accumulate = For(j, columns, ForKind::kSerial,
                        Store(accumulator, Int(0),
                              Add(Load(accumulator, Int(0)),
                                  Unary(UnaryOp::kExp, Load(input, FlatIndex(input, {i, j}))))));
  Stmt row = Stmt(new AllocateNode(
      accumulator,
      Stmt(new SequenceNode({Store(accumulator, Int(0), Float(0, DType::kFloat64)), accumulate,
                             Store(sums, i, Load(accumulator, Int(0)))}))));
  KernelEntry entry = CompileKernel(kir::Kernel{
      "row_sums", {input, sums}, 1, {rows, columns}, For(i, rows, ForKind::kParallel, row)});
  const int64_t row_count = 64, column_count = 9;
  std::vector<double> data(row_count * column_count), results(row_count);
  for (size_t index = 0; index < data.size(); ++index) data[index] = std::sin(double(index));
  void* buffers[] = {data.data(), results.data()};
  int64_t dims[] = {row_count, column_count};
  entry(buffers, dims);
  for (int64_t r = 0; r < row_count; ++r) {
    double expected = 0;
    for (int64_t c = 0; c < column_count; ++c) expected += std::exp(data[r * column_count + c]);
    EXPECT_NEAR(results[r], expected, 1e-12 * std::fabs(expected)) << r;
  }
}

TEST(LowerKernelTest, EqualKernelsCompileOnce) {
  auto build = [] {
    Var n = MakeVar("n");
    Buffer x = MakeBuffer("x", DType::kFloat32, {n});
    Buffer y = MakeBuffer("y", DType::kFloat32, {n});
    Var i = MakeVar("i");
    return kir::Kernel{
        "negate",
        {x, y},
        1,
        {n},
        For(i, n, ForKind::kVectorized, Store(y, i, Unary(UnaryOp::kNegate, Load(x, i))))};
  };
  LlvmJit jit("");
  KernelEntry first = CompileKernel(build(), jit);
  KernelEntry second = CompileKernel(build(), jit);
  EXPECT_EQ(first, second);
  EXPECT_EQ(jit.statistics().compiles, 1u);
  EXPECT_EQ(jit.statistics().memory_hits, 1u);
}

// ---- reductions ---------------------------------------------------------------------

// total[0] = sum of every element (a two-axis reduction), then, in a
// parallel loop after it, row_sums[r] = sum over the row: a reduction inside
// an outlined parallel body, and reduction axes that must not leak into the
// parallel loop's captured variables.
TEST(LowerKernelTest, SumReductionsInsideAndBeforeAParallelLoop) {
  Var rows = MakeVar("rows"), columns = MakeVar("columns");
  Buffer data = MakeBuffer("data", DType::kFloat64, {rows, columns});
  Buffer total = MakeBuffer("total", DType::kFloat64, {Int(1)});
  Buffer row_sums = MakeBuffer("row_sums", DType::kFloat64, {rows});
  Var r = MakeVar("r"), a = MakeVar("a"), b = MakeVar("b"), c = MakeVar("c");
  Expr everything = Reduce(ReduceOp::kSum, {a, b}, {rows, columns}, Float(0, DType::kFloat64),
                           Load(data, FlatIndex(data, {a, b})));
  Expr row = Reduce(ReduceOp::kSum, {c}, {columns}, Float(0, DType::kFloat64),
                    Load(data, FlatIndex(data, {r, c})));
  Stmt body(new SequenceNode({Store(total, Int(0), everything),
                              For(r, rows, ForKind::kParallel, Store(row_sums, r, row))}));
  KernelEntry entry =
      CompileKernel(kir::Kernel{"sums", {data, total, row_sums}, 2, {rows, columns}, body});
  for (auto [row_count, column_count] :
       {std::pair<int64_t, int64_t>{3, 4}, {1, 0}, {0, 5}, {200, 33}}) {
    std::vector<double> values(row_count * column_count), sums(row_count, -1.0);
    for (size_t index = 0; index < values.size(); ++index) values[index] = double(index % 7) - 2.5;
    double sum = -1.0;
    void* buffers[] = {values.data(), &sum, sums.data()};
    int64_t dims[] = {row_count, column_count};
    entry(buffers, dims);
    double expected_total = 0;
    for (int64_t row_index = 0; row_index < row_count; ++row_index) {
      double expected = 0;
      for (int64_t column = 0; column < column_count; ++column)
        expected += values[row_index * column_count + column];
      EXPECT_EQ(sums[row_index], expected) << row_index;
      expected_total += expected;
    }
    EXPECT_EQ(sum, expected_total) << row_count << "x" << column_count;
  }
}

// Reduces each row of `values` (float32, `column_count` wide) with `op`.
template <typename T>
std::vector<T> ReduceRows(ReduceOp op, bool select_last, DType dtype, Expr init,
                          const std::vector<float>& values, int64_t column_count) {
  Var rows = MakeVar("rows");
  Buffer data = MakeBuffer("data", DType::kFloat32, {rows, Int(column_count)});
  Buffer out = MakeBuffer("out", dtype, {rows});
  Var r = MakeVar("r"), c = MakeVar("c");
  Expr reduce = Reduce(op, {c}, {Int(column_count)}, std::move(init),
                       Load(data, FlatIndex(data, {r, c})), select_last);
  EXPECT_EQ(reduce->dtype, dtype);
  KernelEntry entry =
      CompileKernel(kir::Kernel{"reduce_rows",
                                {data, out},
                                1,
                                {rows},
                                For(r, rows, ForKind::kSerial, Store(out, r, reduce))});
  int64_t row_count = static_cast<int64_t>(values.size()) / column_count;
  std::vector<T> results(row_count);
  void* buffers[] = {const_cast<float*>(values.data()), results.data()};
  int64_t dims[] = {row_count};
  entry(buffers, dims);
  return results;
}

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInfinity = std::numeric_limits<float>::infinity();

// Rows: a tie, NaNs (the first wins), all -inf, a NaN first.
const std::vector<float> kArgRows = {
    1,         5, 5, -2, /**/ 3, kNaN, 7, kNaN, -kInfinity, -kInfinity, -kInfinity, -kInfinity,
    /**/ kNaN, 2, 2, 1};

TEST(LowerKernelTest, ArgMaxFindsTheFirstMaximumAndTheFirstNaNLikeNumPy) {
  // Expected from numpy.argmax of each row.
  EXPECT_EQ(ReduceRows<int32_t>(ReduceOp::kArgMax, false, DType::kInt32,
                                Float(-kInfinity, DType::kFloat32), kArgRows, 4),
            (std::vector<int32_t>{1, 1, 0, 0}));
  // select_last: the last maximum, the last NaN.
  EXPECT_EQ(ReduceRows<int32_t>(ReduceOp::kArgMax, true, DType::kInt32,
                                Float(-kInfinity, DType::kFloat32), kArgRows, 4),
            (std::vector<int32_t>{2, 3, 3, 0}));
  // numpy.argmin: the first minimum, the first NaN.
  EXPECT_EQ(ReduceRows<int32_t>(ReduceOp::kArgMin, false, DType::kInt32,
                                Float(kInfinity, DType::kFloat32), kArgRows, 4),
            (std::vector<int32_t>{3, 1, 0, 0}));
}

TEST(LowerKernelTest, MaxAndMinPropagateNaN) {
  std::vector<float> maxima = ReduceRows<float>(ReduceOp::kMaximum, false, DType::kFloat32,
                                                Float(-kInfinity, DType::kFloat32), kArgRows, 4);
  EXPECT_EQ(maxima[0], 5.0f);
  EXPECT_TRUE(std::isnan(maxima[1]));
  EXPECT_EQ(maxima[2], -kInfinity);
  EXPECT_TRUE(std::isnan(maxima[3]));
  std::vector<float> minima = ReduceRows<float>(ReduceOp::kMinimum, false, DType::kFloat32,
                                                Float(kInfinity, DType::kFloat32), kArgRows, 4);
  EXPECT_EQ(minima[0], -2.0f);
  EXPECT_TRUE(std::isnan(minima[1]));
  EXPECT_EQ(minima[2], -kInfinity);
  EXPECT_TRUE(std::isnan(minima[3]));
}

TEST(LowerKernelTest, ArgMaxOverTwoAxesIsTheFlatPositionOverThem) {
  // out[i] = argmax over (j, k) of data[j, i, k]: the position j * 3 + k.
  Buffer data = MakeBuffer("data", DType::kInt32, {Int(2), Int(2), Int(3)});
  Buffer out = MakeBuffer("out", DType::kInt32, {Int(2)});
  Var i = MakeVar("i"), j = MakeVar("j"), k = MakeVar("k");
  Expr reduce = Reduce(ReduceOp::kArgMax, {j, k}, {Int(2), Int(3)},
                       Expr(new IntImmNode(std::numeric_limits<int32_t>::min(), DType::kInt32)),
                       Load(data, FlatIndex(data, {j, i, k})));
  KernelEntry entry = CompileKernel(kir::Kernel{
      "argmax2", {data, out}, 1, {}, For(i, Int(2), ForKind::kSerial, Store(out, i, reduce))});
  // data[j][i][k]; for i = 0 the maximum 9 is at (j=1, k=1) -> 4; for i = 1
  // the maximum 8 appears at (0, 2) and (1, 0): the first, 2.
  std::vector<int32_t> values = {1, 2, 3, /**/ 4, 5, 8, /**/ 0, 9, 9, /**/ 8, 7, 6};
  std::vector<int32_t> results(2, -1);
  void* buffers[] = {values.data(), results.data()};
  entry(buffers, nullptr);
  EXPECT_EQ(results, (std::vector<int32_t>{4, 2}));
}

TEST(LowerKernelTest, ReduceNodesPrintTheirAxesInitAndBody) {
  Var n = MakeVar("n");
  Buffer x = MakeBuffer("x", DType::kFloat32, {n});
  Var j = MakeVar("j");
  EXPECT_EQ(PrintExpr(Reduce(ReduceOp::kSum, {j}, {n}, Float(0, DType::kFloat32), Load(x, j))),
            "sum(v0 in 0..v1; init 0f; b0[v0])");
  EXPECT_EQ(PrintExpr(Reduce(ReduceOp::kArgMax, {j}, {n}, Float(-1, DType::kFloat32), Load(x, j),
                             /*select_last=*/true)),
            "argmax_last(v0 in 0..v1; init -1f; b0[v0])");
}

}  // namespace
}  // namespace relay::kernels::llvm_backend
