#include "kernels/compute/gpu_schedule.h"

namespace relay::kernels {

using namespace relay::kernels::kir;

kir::Kernel BuildGpuKernel(const std::string& name, const std::vector<Buffer>& inputs,
                           const std::vector<Var>& dims, const TensorExpr& output) {
  const Buffer out(new BufferNode("out", output.dtype, output.shape));
  const Var thread(new VarNode("thread"));
  const size_t rank = output.ndim();
  // The thread's position along each axis, the last axis fastest, so that
  // neighbouring threads store neighbouring elements (coalesced).
  std::vector<Expr> indices(rank);
  Expr count = Int(1);
  for (size_t axis = rank; axis-- > 0;) {
    const Expr quotient = Binary(BinaryOp::kFloorDivide, thread, count);
    indices[axis] =
        axis == 0 ? quotient : Binary(BinaryOp::kFloorMod, quotient, output.shape[axis]);
    count = Multiply(count, output.shape[axis]);
  }
  Stmt store(new StoreNode(out, thread, output.at(indices)));
  std::vector<Buffer> params = inputs;
  params.push_back(out);
  return kir::Kernel{name, std::move(params), 1, dims,
                     Stmt(new ForNode(thread, count, ForKind::kDeviceThreads, store))};
}

}  // namespace relay::kernels
