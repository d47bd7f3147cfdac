#include "kernels/codegen/llvm/lower_kernel.h"

#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Metadata.h>
#include <llvm/IR/Module.h>

#include <functional>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "devices/cpu/thread_pool.h"
#include "kernels/codegen/llvm/vector_math.h"
#include "kernels/kir/rewrite.h"

namespace relay::kernels::llvm_backend {

namespace {

using namespace relay::kernels::kir;

// Everything needed to lower statements inside one LLVM function.
struct FunctionState {
  llvm::Function* function = nullptr;
  llvm::Value* buffers = nullptr;  // void* const*
  llvm::Value* dims = nullptr;     // const int64_t*
  std::unordered_map<const BufferNode*, llvm::Value*> buffer_pointers;
  std::unordered_map<const VarNode*, llvm::Value*> variables;
};

class Lowering {
 public:
  Lowering(const kir::Kernel& kernel, const std::string& entry_name)
      : kernel_(kernel),
        entry_name_(entry_name),
        context_(std::make_unique<llvm::LLVMContext>()),
        module_(std::make_unique<llvm::Module>(entry_name, *context_)),
        builder_(*context_) {
    // The optimiser's remarks ("loop not vectorized: ...") are for compiler
    // developers, not for users of relay-vm: keep them off stderr.
    context_->setDiagnosticHandlerCallBack([](const llvm::DiagnosticInfo*, void*) {}, nullptr);
    // a * b + c may become one fused multiply-add (as C compilers do by
    // default): one rounding instead of two, and the instruction every
    // dot product and convolution is made of.
    llvm::FastMathFlags flags;
    flags.setAllowContract(true);
    builder_.setFastMathFlags(flags);
  }

  BuiltModule Run() {
    llvm::FunctionType* entry_type =
        llvm::FunctionType::get(builder_.getVoidTy(), {Pointer(), Pointer()}, false);
    llvm::Function* entry =
        llvm::Function::Create(entry_type, llvm::Function::ExternalLinkage, entry_name_, *module_);
    entry->addFnAttr(llvm::Attribute::NoUnwind);
    FunctionState state;
    state.function = entry;
    state.buffers = entry->getArg(0);
    state.dims = entry->getArg(1);
    builder_.SetInsertPoint(llvm::BasicBlock::Create(*context_, "entry", entry));
    BindKernelArguments(state);
    LowerStatement(kernel_.body, state);
    builder_.CreateRetVoid();
    return {std::move(context_), std::move(module_)};
  }

 private:
  llvm::Type* Pointer() { return builder_.getPtrTy(); }

  // The LLVM type a value of `dtype` has in registers (bool is i1).
  llvm::Type* RegisterType(DType dtype) {
    switch (dtype) {
      case DType::kBool:
        return builder_.getInt1Ty();
      case DType::kInt8:
      case DType::kUInt8:
        return builder_.getInt8Ty();
      case DType::kInt16:
      case DType::kUInt16:
        return builder_.getInt16Ty();
      case DType::kInt32:
      case DType::kUInt32:
        return builder_.getInt32Ty();
      case DType::kInt64:
      case DType::kUInt64:
        return builder_.getInt64Ty();
      case DType::kFloat16:
        return builder_.getHalfTy();
      case DType::kFloat32:
        return builder_.getFloatTy();
      case DType::kFloat64:
        return builder_.getDoubleTy();
    }
    RELAY_UNREACHABLE("dtype without an LLVM type");
  }
  // ... and in memory (bool is a byte, as in NumPy and DLPack).
  llvm::Type* MemoryType(DType dtype) {
    return dtype == DType::kBool ? builder_.getInt8Ty() : RegisterType(dtype);
  }

  void BindKernelArguments(FunctionState& state) {
    DeclareBufferScopes();
    for (size_t index = 0; index < kernel_.params.size(); ++index) {
      llvm::Value* slot = builder_.CreateConstInBoundsGEP1_64(Pointer(), state.buffers, index);
      state.buffer_pointers[kernel_.params[index].get()] =
          builder_.CreateLoad(Pointer(), slot, kernel_.params[index]->name);
    }
    for (size_t index = 0; index < kernel_.dims.size(); ++index) {
      llvm::Value* slot =
          builder_.CreateConstInBoundsGEP1_64(builder_.getInt64Ty(), state.dims, index);
      state.variables[kernel_.dims[index].get()] =
          builder_.CreateLoad(builder_.getInt64Ty(), slot, kernel_.dims[index]->name);
    }
  }

  // One alias scope per parameter buffer: the buffers never overlap (see
  // lower_kernel.h), and saying so lets LLVM keep loads of one buffer
  // across stores to another (a take's index, read once, not per element)
  // and vectorise loops without run-time overlap checks, which it cannot
  // build where an address depends on loaded data.
  void DeclareBufferScopes() {
    if (!buffer_scopes_.empty()) return;
    llvm::MDBuilder metadata(*context_);
    llvm::MDNode* domain = metadata.createAnonymousAliasScopeDomain(entry_name_);
    std::vector<llvm::Metadata*> scopes;
    for (const Buffer& param : kernel_.params) {
      scopes.push_back(metadata.createAnonymousAliasScope(domain, param->name));
    }
    for (size_t index = 0; index < kernel_.params.size(); ++index) {
      std::vector<llvm::Metadata*> others;
      for (size_t other = 0; other < scopes.size(); ++other) {
        if (other != index) others.push_back(scopes[other]);
      }
      buffer_scopes_[kernel_.params[index].get()] = {llvm::MDNode::get(*context_, {scopes[index]}),
                                                     llvm::MDNode::get(*context_, others)};
    }
  }

  // Marks `access` (a load or store of `buffer`) with the buffer's scope,
  // when the buffer is a parameter (not a kernel-local allocation).
  llvm::Value* InScope(llvm::Value* access, const Buffer& buffer) {
    auto scopes = buffer_scopes_.find(buffer.get());
    auto* instruction = llvm::dyn_cast<llvm::Instruction>(access);
    if (scopes != buffer_scopes_.end() && instruction != nullptr) {
      instruction->setMetadata(llvm::LLVMContext::MD_alias_scope, scopes->second.scope);
      instruction->setMetadata(llvm::LLVMContext::MD_noalias, scopes->second.others);
    }
    return access;
  }

  // ---- statements ------------------------------------------------------------------

  void LowerStatement(const Stmt& stmt, FunctionState& state) {
    switch (stmt->node_kind()) {
      case NodeKind::kFor: {
        const auto* loop = As<ForNode>(stmt);
        // Work-groups and their lanes synchronise at barriers, which serial
        // loops cannot honour: such kernels are for GPUs only.
        RELAY_CHECK(loop->kind != ForKind::kDeviceGroups && loop->kind != ForKind::kDeviceLanes,
                    "kernel " + kernel_.name + " is scheduled for a GPU's work-groups");
        if ((loop->kind == ForKind::kParallel || loop->kind == ForKind::kParallelAlternating) &&
            !inside_parallel_) {
          LowerParallelFor(loop, state);
        } else if (loop->kind == ForKind::kVectorized && IsSimdLoop(loop)) {
          LowerSimdLoop(loop, state);
        } else {
          LowerSerialFor(loop, builder_.getInt64(0), LowerExpr(loop->extent, state), state);
        }
        return;
      }
      case NodeKind::kStore: {
        const auto* store = As<StoreNode>(stmt);
        llvm::Value* value = LowerExpr(store->value, state);
        if (store->buffer->dtype == DType::kBool)
          value = builder_.CreateZExt(value, builder_.getInt8Ty());
        InScope(builder_.CreateStore(value, ElementAddress(store->buffer, store->index, state)),
                store->buffer);
        return;
      }
      case NodeKind::kSequence:
        for (const Stmt& statement : As<SequenceNode>(stmt)->statements)
          LowerStatement(statement, state);
        return;
      case NodeKind::kIfThenElse: {
        const auto* branch = As<IfThenElseNode>(stmt);
        llvm::Value* condition = LowerExpr(branch->condition, state);
        auto* then_block = llvm::BasicBlock::Create(*context_, "then", state.function);
        auto* else_block = llvm::BasicBlock::Create(*context_, "else", state.function);
        auto* join_block = llvm::BasicBlock::Create(*context_, "join", state.function);
        builder_.CreateCondBr(condition, then_block, else_block);
        builder_.SetInsertPoint(then_block);
        LowerStatement(branch->then_body, state);
        builder_.CreateBr(join_block);
        builder_.SetInsertPoint(else_block);
        if (branch->else_body) LowerStatement(branch->else_body, state);
        builder_.CreateBr(join_block);
        builder_.SetInsertPoint(join_block);
        return;
      }
      case NodeKind::kAllocate: {
        const auto* allocate = As<AllocateNode>(stmt);
        int64_t count = 1;
        for (const Expr& dimension : allocate->buffer->shape)
          count *= As<IntImmNode>(dimension)->value;
        // Scratch lives in the entry block's frame, so loops reuse it. An
        // array type (not an element type with a count) lets SROA split it
        // into registers once its indices are constant: a register tile.
        llvm::IRBuilder<> entry_builder(&state.function->getEntryBlock(),
                                        state.function->getEntryBlock().begin());
        state.buffer_pointers[allocate->buffer.get()] = entry_builder.CreateAlloca(
            llvm::ArrayType::get(MemoryType(allocate->buffer->dtype), static_cast<uint64_t>(count)),
            nullptr, allocate->buffer->name);
        LowerStatement(allocate->body, state);
        return;
      }
      case NodeKind::kLetStmt: {
        const auto* let = As<LetStmtNode>(stmt);
        state.variables[let->var.get()] = LowerExpr(let->value, state);
        LowerStatement(let->body, state);
        return;
      }
      case NodeKind::kPrefetch: {
        // llvm.prefetch(address, read, locality 2: the outer caches, data).
        // The index is clamped so that the address stays inside the buffer.
        const auto* prefetch = As<PrefetchNode>(stmt);
        const Expr last = Subtract(ElementCount(prefetch->buffer), Int(1));
        const Expr index = Binary(BinaryOp::kMinimum, prefetch->index, last);
        llvm::Value* address = ElementAddress(prefetch->buffer, index, state);
        builder_.CreateIntrinsic(
            llvm::Intrinsic::prefetch, {address->getType()},
            {address, builder_.getInt32(0), builder_.getInt32(2), builder_.getInt32(1)});
        return;
      }
      default:
        RELAY_UNREACHABLE("lowering a kernel expression as a statement");
    }
  }

  // for (var = begin; var < end; ++var) body, with metadata for the loop kind.
  void LowerSerialFor(const ForNode* loop, llvm::Value* begin, llvm::Value* end,
                      FunctionState& state) {
    llvm::BasicBlock* preheader = builder_.GetInsertBlock();
    auto* header = llvm::BasicBlock::Create(*context_, "loop", state.function);
    auto* body = llvm::BasicBlock::Create(*context_, "body", state.function);
    auto* exit = llvm::BasicBlock::Create(*context_, "after", state.function);
    builder_.CreateBr(header);
    builder_.SetInsertPoint(header);
    llvm::PHINode* index = builder_.CreatePHI(builder_.getInt64Ty(), 2, loop->var->name);
    index->addIncoming(begin, preheader);
    builder_.CreateCondBr(builder_.CreateICmpSLT(index, end), body, exit);
    builder_.SetInsertPoint(body);
    state.variables[loop->var.get()] = index;
    LowerStatement(loop->body, state);
    llvm::Value* next =
        builder_.CreateAdd(index, builder_.getInt64(1), "", /*HasNUW=*/true, /*HasNSW=*/true);
    llvm::BranchInst* back_edge = builder_.CreateBr(header);
    index->addIncoming(next, builder_.GetInsertBlock());
    if (llvm::MDNode* metadata = LoopMetadata(loop->kind))
      back_edge->setMetadata("llvm.loop", metadata);
    builder_.SetInsertPoint(exit);
  }

  llvm::MDNode* LoopMetadata(ForKind kind) {
    const char* hint = kind == ForKind::kVectorized ? "llvm.loop.vectorize.enable"
                       : kind == ForKind::kUnrolled ? "llvm.loop.unroll.full"
                                                    : nullptr;
    if (hint == nullptr) return nullptr;
    std::vector<llvm::Metadata*> operands{nullptr};  // the self reference LLVM requires
    if (kind == ForKind::kVectorized) {
      operands.push_back(
          llvm::MDNode::get(*context_, {llvm::MDString::get(*context_, hint),
                                        llvm::ConstantAsMetadata::get(builder_.getTrue())}));
    } else {
      operands.push_back(llvm::MDNode::get(*context_, {llvm::MDString::get(*context_, hint)}));
    }
    llvm::MDNode* node = llvm::MDNode::getDistinct(*context_, operands);
    node->replaceOperandWith(0, node);
    return node;
  }

  // Outlines the loop body into `void chunk(closure, begin, end)` and hands
  // it to the thread pool. The closure holds the kernel's arguments and the
  // values of every variable the body may use.
  void LowerParallelFor(const ForNode* loop, FunctionState& state) {
    std::vector<const VarNode*> captured;
    for (const auto& [var, value] : state.variables) captured.push_back(var);
    // Slot 0: buffers, slot 1: dims, then the captured variables.
    std::vector<llvm::Type*> slot_types{Pointer(), Pointer()};
    for (size_t index = 0; index < captured.size(); ++index)
      slot_types.push_back(builder_.getInt64Ty());
    llvm::StructType* closure_type = llvm::StructType::get(*context_, slot_types);

    llvm::FunctionType* chunk_type = llvm::FunctionType::get(
        builder_.getVoidTy(), {Pointer(), builder_.getInt64Ty(), builder_.getInt64Ty()}, false);
    // Hidden rather than internal: the JIT linker keeps the names of global
    // symbols only, and perf maps (perf_map.h) want the loop's name.
    llvm::Function* chunk = llvm::Function::Create(
        chunk_type, llvm::Function::ExternalLinkage,
        entry_name_ + ".parallel." + std::to_string(++outlined_count_), *module_);
    chunk->setVisibility(llvm::GlobalValue::HiddenVisibility);
    chunk->addFnAttr(llvm::Attribute::NoUnwind);

    // In the caller: fill the closure and call the thread pool.
    llvm::Value* extent = LowerExpr(loop->extent, state);
    llvm::Value* closure = CreateEntryAlloca(state.function, closure_type);
    builder_.CreateStore(state.buffers, builder_.CreateStructGEP(closure_type, closure, 0));
    builder_.CreateStore(state.dims, builder_.CreateStructGEP(closure_type, closure, 1));
    for (size_t index = 0; index < captured.size(); ++index) {
      builder_.CreateStore(
          state.variables.at(captured[index]),
          builder_.CreateStructGEP(closure_type, closure, static_cast<unsigned>(index + 2)));
    }
    llvm::FunctionType* parallel_for_type = llvm::FunctionType::get(
        builder_.getVoidTy(),
        {Pointer(), Pointer(), builder_.getInt64Ty(), builder_.getInt64Ty(), builder_.getInt64Ty()},
        false);
    llvm::FunctionCallee parallel_for = module_->getOrInsertFunction(
        loop->kind == ForKind::kParallelAlternating ? kParallelForAlternatingSymbol
                                                    : kParallelForSymbol,
        parallel_for_type);
    builder_.CreateCall(parallel_for,
                        {chunk, closure, builder_.getInt64(0), extent, builder_.getInt64(1)});
    llvm::IRBuilderBase::InsertPoint after_call = builder_.saveIP();

    // The chunk function: rebuild the state from the closure, run the loop
    // over [begin, end).
    FunctionState chunk_state;
    chunk_state.function = chunk;
    builder_.SetInsertPoint(llvm::BasicBlock::Create(*context_, "entry", chunk));
    llvm::Value* chunk_closure = chunk->getArg(0);
    chunk_state.buffers =
        builder_.CreateLoad(Pointer(), builder_.CreateStructGEP(closure_type, chunk_closure, 0));
    chunk_state.dims =
        builder_.CreateLoad(Pointer(), builder_.CreateStructGEP(closure_type, chunk_closure, 1));
    BindKernelArguments(chunk_state);
    for (size_t index = 0; index < captured.size(); ++index) {
      chunk_state.variables[captured[index]] = builder_.CreateLoad(
          builder_.getInt64Ty(),
          builder_.CreateStructGEP(closure_type, chunk_closure, static_cast<unsigned>(index + 2)));
    }
    // Scratch buffers allocated outside the loop are not shared across
    // threads; the kernel builder allocates them inside parallel loops.
    inside_parallel_ = true;
    LowerSerialFor(loop, chunk->getArg(1), chunk->getArg(2), chunk_state);
    inside_parallel_ = false;
    builder_.CreateRetVoid();
    builder_.restoreIP(after_call);
  }

  // ---- SIMD loops ------------------------------------------------------------------
  //
  // A vectorised loop of small constant extent (a register tile's row) is
  // lowered here as one iteration over vector lanes, rather than left to
  // LLVM's vectorisers: after the enclosing loops are unrolled those see
  // only scalars and regroup them unpredictably. Each expression becomes
  // either a scalar (it does not mention the loop variable: one value for
  // every lane) or a vector with one lane per iteration. An index that
  // steps by one per iteration becomes a contiguous vector load or store;
  // any other varying index a gather or scatter. Inside an if whose
  // condition varies, stores and varying loads are masked, and the branch is
  // skipped when no lane is active (so a uniform load runs only when the
  // scalar loop would have run it for some iteration).

  static constexpr int64_t kMaximumSimdLanes = 64;
  // Loads at most this far apart lane to lane are a contiguous load and a
  // shuffle rather than a gather.
  static constexpr int64_t kMaximumShuffledStride = 4;

  bool IsSimdLoop(const ForNode* loop) {
    const auto* extent = As<IntImmNode>(loop->extent);
    if (extent == nullptr) return false;
    int64_t lanes = extent->value;
    if (lanes < 2 || lanes > kMaximumSimdLanes || (lanes & (lanes - 1)) != 0) return false;
    return IsSimdStatement(loop->body, loop->var.get());
  }

  // Stores (into a varying index), sequences of them and ifs without else;
  // no loops, reductions or bindings inside.
  static bool IsSimdStatement(const Stmt& stmt, const VarNode* var) {
    switch (stmt->node_kind()) {
      case NodeKind::kStore: {
        const auto* store = As<StoreNode>(stmt);
        return MentionsAny(store->index, {var}) && FindReductions(store->value).empty() &&
               FindReductions(store->index).empty();
      }
      case NodeKind::kSequence:
        for (const Stmt& statement : As<SequenceNode>(stmt)->statements) {
          if (!IsSimdStatement(statement, var)) return false;
        }
        return true;
      case NodeKind::kIfThenElse: {
        const auto* branch = As<IfThenElseNode>(stmt);
        return !branch->else_body && FindReductions(branch->condition).empty() &&
               IsSimdStatement(branch->then_body, var);
      }
      default:
        return false;
    }
  }

  // How much `index` grows per step of `var`, when it is affine in `var`.
  static std::optional<int64_t> StrideIn(const Expr& index, const VarNode* var) {
    if (!MentionsAny(index, {var})) return 0;
    if (As<VarNode>(index) == var) return 1;
    const auto* binary = As<BinaryNode>(index);
    if (binary == nullptr) return std::nullopt;
    std::optional<int64_t> a = StrideIn(binary->a, var), b = StrideIn(binary->b, var);
    if (!a || !b) return std::nullopt;
    switch (binary->op) {
      case BinaryOp::kAdd:
        return *a + *b;
      case BinaryOp::kSubtract:
        return *a - *b;
      case BinaryOp::kMultiply: {
        const auto* left = As<IntImmNode>(binary->a);
        const auto* right = As<IntImmNode>(binary->b);
        if (*a == 0 && left != nullptr) return left->value * *b;
        if (*b == 0 && right != nullptr) return *a * right->value;
        return std::nullopt;
      }
      default:
        return std::nullopt;
    }
  }

  struct SimdState {
    const VarNode* var = nullptr;
    unsigned lanes = 0;
    llvm::Value* mask = nullptr;  // <lanes x i1>, or null when every lane is active
  };

  // `type` with as many lanes as `like` has (scalar when `like` is scalar).
  static llvm::Type* LanesOf(llvm::Type* type, llvm::Value* like) {
    if (auto* vector = llvm::dyn_cast<llvm::VectorType>(like->getType()))
      return llvm::VectorType::get(type, vector->getElementCount());
    return type;
  }

  llvm::Value* Splat(llvm::Value* value, const SimdState& simd) {
    if (value->getType()->isVectorTy()) return value;
    return builder_.CreateVectorSplat(simd.lanes, value);
  }

  // Applies a scalar lowering lane by lane (for operations without a vector
  // form here: integer powers).
  llvm::Value* PerLane(
      const std::vector<llvm::Value*>& operands, const SimdState& simd,
      const std::function<llvm::Value*(const std::vector<llvm::Value*>&)>& scalar) {
    llvm::Value* result = nullptr;
    for (unsigned lane = 0; lane < simd.lanes; ++lane) {
      std::vector<llvm::Value*> lane_operands;
      for (llvm::Value* operand : operands)
        lane_operands.push_back(builder_.CreateExtractElement(Splat(operand, simd), lane));
      llvm::Value* value = scalar(lane_operands);
      if (result == nullptr)
        result = llvm::PoisonValue::get(llvm::VectorType::get(value->getType(), simd.lanes, false));
      result = builder_.CreateInsertElement(result, value, lane);
    }
    return result;
  }

  void LowerSimdLoop(const ForNode* loop, FunctionState& state) {
    SimdState simd;
    simd.var = loop->var.get();
    simd.lanes = static_cast<unsigned>(As<IntImmNode>(loop->extent)->value);
    LowerSimdStatement(loop->body, state, simd);
  }

  void LowerSimdStatement(const Stmt& stmt, FunctionState& state, const SimdState& simd) {
    switch (stmt->node_kind()) {
      case NodeKind::kStore: {
        const auto* store = As<StoreNode>(stmt);
        llvm::Value* value = Splat(LowerLanes(store->value, state, simd), simd);
        if (store->buffer->dtype == DType::kBool)
          value = builder_.CreateZExt(value, LanesOf(builder_.getInt8Ty(), value));
        llvm::Align align(DTypeSize(store->buffer->dtype));
        if (StrideIn(store->index, simd.var) == 1) {
          llvm::Value* address = LaneZeroAddress(store->buffer, store->index, state, simd);
          if (simd.mask) {
            InScope(builder_.CreateMaskedStore(value, address, align, simd.mask), store->buffer);
          } else {
            InScope(builder_.CreateAlignedStore(value, address, align), store->buffer);
          }
        } else {
          InScope(
              builder_.CreateMaskedScatter(
                  value, LaneAddresses(store->buffer, store->index, state, simd), align, simd.mask),
              store->buffer);
        }
        return;
      }
      case NodeKind::kSequence:
        for (const Stmt& statement : As<SequenceNode>(stmt)->statements)
          LowerSimdStatement(statement, state, simd);
        return;
      case NodeKind::kIfThenElse: {
        const auto* branch = As<IfThenElseNode>(stmt);
        llvm::Value* condition = LowerLanes(branch->condition, state, simd);
        SimdState inner = simd;
        if (condition->getType()->isVectorTy()) {
          inner.mask = simd.mask ? builder_.CreateAnd(simd.mask, condition) : condition;
          condition = builder_.CreateOrReduce(inner.mask);
        }
        auto* then_block = llvm::BasicBlock::Create(*context_, "simd.then", state.function);
        auto* join_block = llvm::BasicBlock::Create(*context_, "simd.join", state.function);
        builder_.CreateCondBr(condition, then_block, join_block);
        builder_.SetInsertPoint(then_block);
        LowerSimdStatement(branch->then_body, state, inner);
        builder_.CreateBr(join_block);
        builder_.SetInsertPoint(join_block);
        return;
      }
      default:
        RELAY_UNREACHABLE("statement kind not admitted by IsSimdStatement");
    }
  }

  // The address of lane 0's element: `index` with the loop variable at 0.
  llvm::Value* LaneZeroAddress(const Buffer& buffer, const Expr& index, FunctionState& state,
                               const SimdState& simd) {
    state.variables[simd.var] = builder_.getInt64(0);
    llvm::Value* address = ElementAddress(buffer, index, state);
    state.variables.erase(simd.var);
    return address;
  }

  llvm::Value* LaneAddresses(const Buffer& buffer, const Expr& index, FunctionState& state,
                             const SimdState& simd) {
    auto found = state.buffer_pointers.find(buffer.get());
    RELAY_CHECK(found != state.buffer_pointers.end(),
                "kernel uses buffer " + buffer->name + " it does not declare");
    return builder_.CreateInBoundsGEP(MemoryType(buffer->dtype), found->second,
                                      Splat(LowerLanes(index, state, simd), simd));
  }

  llvm::Value* LowerLanes(const Expr& expr, FunctionState& state, const SimdState& simd) {
    if (!MentionsAny(expr, {simd.var})) return LowerExpr(expr, state);
    switch (expr->node_kind()) {
      case NodeKind::kVar: {
        std::vector<llvm::Constant*> steps;
        for (unsigned lane = 0; lane < simd.lanes; ++lane) steps.push_back(builder_.getInt64(lane));
        return llvm::ConstantVector::get(steps);
      }
      case NodeKind::kLoad: {
        const auto* load = As<LoadNode>(expr);
        llvm::Type* element = MemoryType(load->buffer->dtype);
        llvm::Type* type = llvm::VectorType::get(element, simd.lanes, false);
        llvm::Align align(DTypeSize(load->buffer->dtype));
        llvm::Value* value;
        const std::optional<int64_t> stride = StrideIn(load->index, simd.var);
        if (stride == 1) {
          llvm::Value* address = LaneZeroAddress(load->buffer, load->index, state, simd);
          if (simd.mask) {
            value = builder_.CreateMaskedLoad(type, address, align, simd.mask,
                                              llvm::Constant::getNullValue(type));
          } else {
            value = builder_.CreateAlignedLoad(type, address, align);
          }
        } else if (stride && *stride >= 2 && *stride <= kMaximumShuffledStride && !simd.mask) {
          // Every `stride`-th element from lane 0's: one contiguous load of
          // the span (its tail past the last lane's element masked off, so
          // that nothing beyond the buffer is touched) and a shuffle that
          // picks the lanes. A gather fetches element by element: a
          // deinterleaving copy (stride-2 windows' even and odd columns)
          // runs several times faster this way.
          const unsigned span = simd.lanes * static_cast<unsigned>(*stride);
          const unsigned reached = (simd.lanes - 1) * static_cast<unsigned>(*stride) + 1;
          std::vector<llvm::Constant*> inside;
          for (unsigned element = 0; element < span; ++element)
            inside.push_back(builder_.getInt1(element < reached));
          llvm::Type* wide = llvm::VectorType::get(element, span, false);
          llvm::Value* block = builder_.CreateMaskedLoad(
              wide, LaneZeroAddress(load->buffer, load->index, state, simd), align,
              llvm::ConstantVector::get(inside), llvm::Constant::getNullValue(wide));
          InScope(block, load->buffer);
          std::vector<int> picked;
          for (unsigned lane = 0; lane < simd.lanes; ++lane)
            picked.push_back(static_cast<int>(lane * *stride));
          value = builder_.CreateShuffleVector(block, picked);
        } else {
          value = builder_.CreateMaskedGather(type,
                                              LaneAddresses(load->buffer, load->index, state, simd),
                                              align, simd.mask, llvm::Constant::getNullValue(type));
        }
        InScope(value, load->buffer);
        if (load->buffer->dtype == DType::kBool)
          value = builder_.CreateICmpNE(value, llvm::Constant::getNullValue(type));
        return value;
      }
      case NodeKind::kBinary: {
        const auto* binary = As<BinaryNode>(expr);
        llvm::Value* a = LowerLanes(binary->a, state, simd);
        llvm::Value* b = LowerLanes(binary->b, state, simd);
        DType dtype = binary->a->dtype;
        if (binary->op == BinaryOp::kPower && !IsFloat(dtype)) {
          return PerLane({a, b}, simd, [&](const std::vector<llvm::Value*>& lane) {
            return LowerBinary(binary->op, dtype, lane[0], lane[1]);
          });
        }
        return LowerBinary(binary->op, dtype, Splat(a, simd), Splat(b, simd));
      }
      case NodeKind::kUnary: {
        const auto* unary = As<UnaryNode>(expr);
        llvm::Value* a = LowerLanes(unary->a, state, simd);
        return LowerUnary(unary->op, unary->a->dtype, a);
      }
      case NodeKind::kSelect: {
        const auto* select = As<SelectNode>(expr);
        llvm::Value* condition = LowerLanes(select->condition, state, simd);
        llvm::Value* if_true = Splat(LowerLanes(select->if_true, state, simd), simd);
        llvm::Value* if_false = Splat(LowerLanes(select->if_false, state, simd), simd);
        return builder_.CreateSelect(condition, if_true, if_false);
      }
      case NodeKind::kCast: {
        const auto* cast = As<CastNode>(expr);
        return LowerCast(LowerLanes(cast->value, state, simd), cast->value->dtype, cast->dtype);
      }
      default:
        RELAY_UNREACHABLE("expression kind not admitted by IsSimdStatement");
    }
  }

  llvm::Value* CreateEntryAlloca(llvm::Function* function, llvm::Type* type) {
    llvm::IRBuilder<> entry_builder(&function->getEntryBlock(), function->getEntryBlock().begin());
    return entry_builder.CreateAlloca(type);
  }

  llvm::Value* ElementAddress(const Buffer& buffer, const Expr& index, FunctionState& state) {
    auto found = state.buffer_pointers.find(buffer.get());
    RELAY_CHECK(found != state.buffer_pointers.end(),
                "kernel uses buffer " + buffer->name + " it does not declare");
    return builder_.CreateInBoundsGEP(MemoryType(buffer->dtype), found->second,
                                      LowerExpr(index, state));
  }

  // ---- expressions -----------------------------------------------------------------

  llvm::Value* LowerExpr(const Expr& expr, FunctionState& state) {
    switch (expr->node_kind()) {
      case NodeKind::kIntImm:
        return llvm::ConstantInt::get(RegisterType(expr->dtype),
                                      static_cast<uint64_t>(As<IntImmNode>(expr)->value),
                                      /*IsSigned=*/true);
      case NodeKind::kFloatImm:
        return llvm::ConstantFP::get(RegisterType(expr->dtype), As<FloatImmNode>(expr)->value);
      case NodeKind::kVar: {
        auto found = state.variables.find(As<VarNode>(expr));
        RELAY_CHECK(found != state.variables.end(),
                    "kernel uses variable " + As<VarNode>(expr)->name + " unbound");
        return found->second;
      }
      case NodeKind::kLoad: {
        const auto* load = As<LoadNode>(expr);
        llvm::Value* value =
            InScope(builder_.CreateLoad(MemoryType(load->buffer->dtype),
                                        ElementAddress(load->buffer, load->index, state)),
                    load->buffer);
        if (load->buffer->dtype == DType::kBool)
          value = builder_.CreateICmpNE(value, builder_.getInt8(0));
        return value;
      }
      case NodeKind::kBinary: {
        const auto* binary = As<BinaryNode>(expr);
        return LowerBinary(binary->op, binary->a->dtype, LowerExpr(binary->a, state),
                           LowerExpr(binary->b, state));
      }
      case NodeKind::kUnary: {
        const auto* unary = As<UnaryNode>(expr);
        return LowerUnary(unary->op, unary->a->dtype, LowerExpr(unary->a, state));
      }
      case NodeKind::kSelect: {
        const auto* select = As<SelectNode>(expr);
        llvm::Value* condition = LowerExpr(select->condition, state);
        return builder_.CreateSelect(condition, LowerExpr(select->if_true, state),
                                     LowerExpr(select->if_false, state));
      }
      case NodeKind::kCast: {
        const auto* cast = As<CastNode>(expr);
        return LowerCast(LowerExpr(cast->value, state), cast->value->dtype, cast->dtype);
      }
      case NodeKind::kReduce: {
        const auto* reduce = As<ReduceNode>(expr);
        if (auto hoisted = hoisted_reductions_.find(reduce); hoisted != hoisted_reductions_.end()) {
          return hoisted->second;
        }
        return LowerReduce(reduce, state);
      }
      default:
        RELAY_UNREACHABLE("lowering a kernel statement as an expression");
    }
  }

  // A reduction becomes a loop nest emitted where the expression is used;
  // its value is the final accumulator. The accumulator (and, for arg-min/max,
  // the best position and a running position) live in entry-block allocas,
  // which mem2reg turns into registers, so the nest needs no phi bookkeeping
  // across its levels.
  llvm::Value* LowerReduce(const ReduceNode* reduce, FunctionState& state) {
    // Inner reductions that do not depend on this one's axes (softmax's row
    // maximum inside its sum of exponentials) are computed once, before the
    // loop nest, instead of once per iteration.
    std::unordered_set<const VarNode*> axes;
    for (const Var& axis : reduce->axes) axes.insert(axis.get());
    std::vector<const ReduceNode*> invariant;
    CollectInvariantReductions(reduce->body, axes, invariant);
    for (const ReduceNode* inner : invariant) {
      if (!hoisted_reductions_.count(inner)) hoisted_reductions_[inner] = LowerReduce(inner, state);
    }
    llvm::Value* result = LowerContiguousSum(reduce, state);
    if (result == nullptr) result = LowerReduceLoops(reduce, state);
    for (const ReduceNode* inner : invariant) hoisted_reductions_.erase(inner);
    return result;
  }

  // A float sum from 0 over one axis of small power-of-two constant extent
  // of a load contiguous along it (a register tile's lanes, which the
  // small-rows contraction schedule sums when it stores a block) is one
  // vector load and llvm.vector.reduce.fadd, which x86 lowers as a tree of
  // half-width shuffles and adds: four of each for 16 lanes. Written as
  // scalars, LLVM's SLP vectoriser turned four such sums into some sixty
  // shuffles on one port, which bounded a 1x128 by 512x128 product.
  // Nothing (the caller lowers the loop) for any other reduction.
  llvm::Value* LowerContiguousSum(const ReduceNode* reduce, FunctionState& state) {
    if (reduce->op != ReduceOp::kSum || reduce->axes.size() != 1 || !IsFloat(reduce->dtype) ||
        reduce->body->dtype != reduce->dtype || reduce->dtype == DType::kFloat16) {
      return nullptr;
    }
    const auto* extent = As<IntImmNode>(reduce->extents[0]);
    const auto* init = As<FloatImmNode>(reduce->init);
    const auto* load = As<LoadNode>(reduce->body);
    if (extent == nullptr || init == nullptr || init->value != 0 || load == nullptr) return nullptr;
    const int64_t lanes = extent->value;
    if (lanes < 2 || lanes > kMaximumSimdLanes || (lanes & (lanes - 1)) != 0) return nullptr;
    const VarNode* axis = reduce->axes[0].get();
    if (StrideIn(load->index, axis) != 1 || load->buffer->dtype != reduce->dtype) return nullptr;
    SimdState simd;
    simd.var = axis;
    simd.lanes = static_cast<unsigned>(lanes);
    llvm::Value* vector = LowerLanes(reduce->body, state, simd);
    llvm::IRBuilderBase::FastMathFlagGuard guard(builder_);
    llvm::FastMathFlags flags = builder_.getFastMathFlags();
    flags.setAllowReassoc(true);
    builder_.setFastMathFlags(flags);
    return builder_.CreateFAddReduce(llvm::ConstantFP::get(RegisterType(reduce->dtype), -0.0),
                                     vector);
  }

  // The outermost reductions inside `expr` that mention none of `axes`.
  static void CollectInvariantReductions(const Expr& expr,
                                         const std::unordered_set<const VarNode*>& axes,
                                         std::vector<const ReduceNode*>& found) {
    if (const auto* reduce = As<ReduceNode>(expr)) {
      if (!MentionsAny(expr, axes)) {
        found.push_back(reduce);
        return;
      }
    }
    for (const Expr& child : Operands(expr)) CollectInvariantReductions(child, axes, found);
  }

  llvm::Value* LowerReduceLoops(const ReduceNode* reduce, FunctionState& state) {
    llvm::Type* type = RegisterType(reduce->body->dtype);
    llvm::Type* index_type = builder_.getInt64Ty();
    bool is_arg = reduce->op == ReduceOp::kArgMin || reduce->op == ReduceOp::kArgMax;
    std::vector<llvm::Value*> extents;
    for (const Expr& extent : reduce->extents) extents.push_back(LowerExpr(extent, state));
    llvm::Value* accumulator = CreateEntryAlloca(state.function, type);
    builder_.CreateStore(LowerExpr(reduce->init, state), accumulator);
    llvm::Value* best_position = nullptr;
    llvm::Value* position = nullptr;
    if (is_arg) {
      best_position = CreateEntryAlloca(state.function, index_type);
      position = CreateEntryAlloca(state.function, index_type);
      builder_.CreateStore(builder_.getInt64(0), best_position);
      builder_.CreateStore(builder_.getInt64(0), position);
    }
    EmitReduceLoops(reduce, extents, 0, state, [&] {
      llvm::Value* value = LowerExpr(reduce->body, state);
      llvm::Value* current = builder_.CreateLoad(type, accumulator);
      if (!is_arg) {
        builder_.CreateStore(Combine(reduce->op, reduce->body->dtype, current, value), accumulator);
        return;
      }
      llvm::Value* here = builder_.CreateLoad(index_type, position);
      llvm::Value* take = ArgTakes(reduce, value, current);
      builder_.CreateStore(builder_.CreateSelect(take, value, current), accumulator);
      builder_.CreateStore(
          builder_.CreateSelect(take, here, builder_.CreateLoad(index_type, best_position)),
          best_position);
      builder_.CreateStore(builder_.CreateAdd(here, builder_.getInt64(1)), position);
    });
    // The axes are bound only inside the nest: a later parallel loop must
    // not capture them.
    for (const Var& axis : reduce->axes) state.variables.erase(axis.get());
    if (is_arg) {
      return builder_.CreateTrunc(builder_.CreateLoad(index_type, best_position),
                                  builder_.getInt32Ty());
    }
    return builder_.CreateLoad(type, accumulator);
  }

  void EmitReduceLoops(const ReduceNode* reduce, const std::vector<llvm::Value*>& extents,
                       size_t axis, FunctionState& state, const std::function<void()>& innermost) {
    if (axis == extents.size()) {
      innermost();
      return;
    }
    llvm::BasicBlock* preheader = builder_.GetInsertBlock();
    auto* header = llvm::BasicBlock::Create(*context_, "reduce", state.function);
    auto* body = llvm::BasicBlock::Create(*context_, "reduce.body", state.function);
    auto* exit = llvm::BasicBlock::Create(*context_, "reduce.after", state.function);
    builder_.CreateBr(header);
    builder_.SetInsertPoint(header);
    llvm::PHINode* index = builder_.CreatePHI(builder_.getInt64Ty(), 2, reduce->axes[axis]->name);
    index->addIncoming(builder_.getInt64(0), preheader);
    builder_.CreateCondBr(builder_.CreateICmpSLT(index, extents[axis]), body, exit);
    builder_.SetInsertPoint(body);
    state.variables[reduce->axes[axis].get()] = index;
    EmitReduceLoops(reduce, extents, axis + 1, state, innermost);
    llvm::Value* next =
        builder_.CreateAdd(index, builder_.getInt64(1), "", /*HasNUW=*/true, /*HasNSW=*/true);
    builder_.CreateBr(header);
    index->addIncoming(next, builder_.GetInsertBlock());
    builder_.SetInsertPoint(exit);
  }

  llvm::Value* Combine(ReduceOp op, DType dtype, llvm::Value* accumulator, llvm::Value* value) {
    switch (op) {
      case ReduceOp::kSum: {
        if (!IsFloat(dtype)) return LowerBinary(BinaryOp::kAdd, dtype, accumulator, value);
        // The order of a floating-point sum is the loop vectoriser's to
        // choose (lanes of partial sums, added at the end), as BLAS and
        // every framework's reductions do: without this, each sum is one
        // serial chain of additions and its terms (softmax's exponentials)
        // are computed a lane at a time.
        llvm::IRBuilderBase::FastMathFlagGuard guard(builder_);
        llvm::FastMathFlags flags = builder_.getFastMathFlags();
        flags.setAllowReassoc(true);
        builder_.setFastMathFlags(flags);
        return builder_.CreateFAdd(accumulator, value);
      }
      case ReduceOp::kProduct:
        return LowerBinary(BinaryOp::kMultiply, dtype, accumulator, value);
      // NaN-propagating for floats; AND and OR for bools (i1 compared unsigned).
      // A float reduction accumulates with llvm.minimum/maximum, which LLVM
      // vectorises as a reduction (lanes of partial extremes), unlike the
      // compare-and-select that LowerBinary emits for one pair: softmax's
      // row maximum (4x256x256) ran 3x slower that way.
      case ReduceOp::kMinimum:
        if (IsFloat(dtype))
          return Intrinsic(llvm::Intrinsic::minimum, accumulator->getType(), {accumulator, value});
        return LowerBinary(BinaryOp::kMinimum, dtype, accumulator, value);
      case ReduceOp::kMaximum:
        if (IsFloat(dtype))
          return Intrinsic(llvm::Intrinsic::maximum, accumulator->getType(), {accumulator, value});
        return LowerBinary(BinaryOp::kMaximum, dtype, accumulator, value);
      default:
        break;
    }
    RELAY_UNREACHABLE("combining an arg reduction as a value reduction");
  }

  // Whether `value` replaces `best` as the arg-min/max candidate. A NaN is
  // the extremum, as in numpy.argmax: the first NaN wins and nothing replaces
  // it, except a later NaN when the last extremum is asked for.
  llvm::Value* ArgTakes(const ReduceNode* reduce, llvm::Value* value, llvm::Value* best) {
    DType dtype = reduce->body->dtype;
    bool is_max = reduce->op == ReduceOp::kArgMax;
    bool last = reduce->select_last;
    if (IsFloat(dtype)) {
      llvm::Value* better =
          is_max
              ? (last ? builder_.CreateFCmpOGE(value, best) : builder_.CreateFCmpOGT(value, best))
              : (last ? builder_.CreateFCmpOLE(value, best) : builder_.CreateFCmpOLT(value, best));
      llvm::Value* value_is_nan = builder_.CreateFCmpUNO(value, value);
      llvm::Value* nan_wins =
          last ? value_is_nan
               : builder_.CreateAnd(value_is_nan, builder_.CreateFCmpORD(best, best));
      return builder_.CreateOr(better, nan_wins);
    }
    bool is_signed = IsSignedInteger(dtype);
    llvm::CmpInst::Predicate predicate =
        is_max ? (last ? (is_signed ? llvm::CmpInst::ICMP_SGE : llvm::CmpInst::ICMP_UGE)
                       : (is_signed ? llvm::CmpInst::ICMP_SGT : llvm::CmpInst::ICMP_UGT))
               : (last ? (is_signed ? llvm::CmpInst::ICMP_SLE : llvm::CmpInst::ICMP_ULE)
                       : (is_signed ? llvm::CmpInst::ICMP_SLT : llvm::CmpInst::ICMP_ULT));
    return builder_.CreateICmp(predicate, value, best);
  }

  llvm::Value* Intrinsic(llvm::Intrinsic::ID id, llvm::Type* type, std::vector<llvm::Value*> args) {
    return builder_.CreateIntrinsic(id, {type}, args);
  }

  // A function of the vector math library (vector_math.h) on a float or
  // double scalar or vector; half is computed in float. Straight-line IR,
  // so it vectorises with the loop around it, unlike a libm call per lane.
  llvm::Value* Transcendental(llvm::Value* (*emit)(llvm::IRBuilderBase&, llvm::Value*),
                              llvm::Value* value) {
    llvm::Type* type = value->getType();
    if (!type->getScalarType()->isHalfTy()) return emit(builder_, value);
    llvm::Value* wide = builder_.CreateFPExt(value, LanesOf(builder_.getFloatTy(), value));
    return builder_.CreateFPTrunc(emit(builder_, wide), type);
  }

  llvm::Value* LowerUnary(UnaryOp op, DType dtype, llvm::Value* value) {
    llvm::Type* type = value->getType();
    bool is_float = IsFloat(dtype);
    switch (op) {
      case UnaryOp::kNegate:
        return is_float ? builder_.CreateFNeg(value) : builder_.CreateNeg(value);
      case UnaryOp::kAbs:
        if (is_float) return Intrinsic(llvm::Intrinsic::fabs, type, {value});
        if (!IsSignedInteger(dtype)) return value;
        return Intrinsic(llvm::Intrinsic::abs, type, {value, builder_.getFalse()});
      case UnaryOp::kExp:
        return Transcendental(EmitExp, value);
      case UnaryOp::kLog:
        return Transcendental(EmitLog, value);
      case UnaryOp::kSqrt:
        return Intrinsic(llvm::Intrinsic::sqrt, type, {value});
      case UnaryOp::kTanh:
        return Transcendental(EmitTanh, value);
      case UnaryOp::kErf:
        return Transcendental(EmitErf, value);
      case UnaryOp::kFloor:
        return is_float ? Intrinsic(llvm::Intrinsic::floor, type, {value}) : value;
      case UnaryOp::kCeil:
        return is_float ? Intrinsic(llvm::Intrinsic::ceil, type, {value}) : value;
      // NumPy rounds halves to even.
      case UnaryOp::kRound:
        return is_float ? Intrinsic(llvm::Intrinsic::roundeven, type, {value}) : value;
      // llvm.sin and llvm.cos become libm calls (a lane at a time on vectors).
      case UnaryOp::kSin:
        return Intrinsic(llvm::Intrinsic::sin, type, {value});
      case UnaryOp::kCos:
        return Intrinsic(llvm::Intrinsic::cos, type, {value});
      // As do these (tanf, asinf, ...: LLVM 19's intrinsics).
      case UnaryOp::kTan:
        return Intrinsic(llvm::Intrinsic::tan, type, {value});
      case UnaryOp::kAsin:
        return Intrinsic(llvm::Intrinsic::asin, type, {value});
      case UnaryOp::kAcos:
        return Intrinsic(llvm::Intrinsic::acos, type, {value});
      case UnaryOp::kAtan:
        return Intrinsic(llvm::Intrinsic::atan, type, {value});
      case UnaryOp::kSinh:
        return Intrinsic(llvm::Intrinsic::sinh, type, {value});
      case UnaryOp::kCosh:
        return Intrinsic(llvm::Intrinsic::cosh, type, {value});
      case UnaryOp::kNot:
        return builder_.CreateNot(value);
    }
    RELAY_UNREACHABLE("unknown unary kernel operator");
  }

  llvm::Value* LowerBinary(BinaryOp op, DType dtype, llvm::Value* a, llvm::Value* b) {
    llvm::Type* type = a->getType();
    if (IsFloat(dtype)) {
      switch (op) {
        case BinaryOp::kAdd:
          return builder_.CreateFAdd(a, b);
        case BinaryOp::kSubtract:
          return builder_.CreateFSub(a, b);
        case BinaryOp::kMultiply:
          return builder_.CreateFMul(a, b);
        case BinaryOp::kDivide:
          return builder_.CreateFDiv(a, b);
        case BinaryOp::kFloorDivide:
          return Intrinsic(llvm::Intrinsic::floor, type, {builder_.CreateFDiv(a, b)});
        case BinaryOp::kTruncMod:
          return builder_.CreateFRem(a, b);  // C's fmod
        case BinaryOp::kFloorMod: {
          // a - floor(a / b) * b: the result takes the divisor's sign, as in NumPy.
          llvm::Value* quotient =
              Intrinsic(llvm::Intrinsic::floor, type, {builder_.CreateFDiv(a, b)});
          return builder_.CreateFSub(a, builder_.CreateFMul(quotient, b));
        }
        // NaN-propagating, as numpy.minimum / numpy.maximum: a NaN in either
        // operand is the result. Written as a compare-and-select (which x86
        // does in one minps/maxps, whose NaN case is the second operand's)
        // plus a test of the first operand for NaN, rather than as
        // llvm.minimum/maximum, whose exact ordering of -0 below +0 costs
        // six instructions per vector on x86 (a 3x3 max pool's nine
        // windows: most of its time). Like NumPy's, the result for -0 and +0
        // is either of them.
        case BinaryOp::kMinimum:
        case BinaryOp::kMaximum: {
          llvm::Value* first_wins = op == BinaryOp::kMaximum ? builder_.CreateFCmpOGT(a, b)
                                                             : builder_.CreateFCmpOLT(a, b);
          llvm::Value* chosen = builder_.CreateSelect(first_wins, a, b);
          return builder_.CreateSelect(builder_.CreateFCmpUNO(a, a), a, chosen);
        }
        case BinaryOp::kPower:
          return Intrinsic(llvm::Intrinsic::pow, type, {a, b});
        case BinaryOp::kEqual:
          return builder_.CreateFCmpOEQ(a, b);
        case BinaryOp::kNotEqual:
          return builder_.CreateFCmpUNE(a, b);
        case BinaryOp::kLess:
          return builder_.CreateFCmpOLT(a, b);
        case BinaryOp::kLessEqual:
          return builder_.CreateFCmpOLE(a, b);
        case BinaryOp::kGreater:
          return builder_.CreateFCmpOGT(a, b);
        case BinaryOp::kGreaterEqual:
          return builder_.CreateFCmpOGE(a, b);
        default:
          break;
      }
      RELAY_UNREACHABLE("logical operator on floats in a kernel");
    }
    bool is_signed = IsSignedInteger(dtype);
    switch (op) {
      case BinaryOp::kAdd:
        return builder_.CreateAdd(a, b);
      case BinaryOp::kSubtract:
        return builder_.CreateSub(a, b);
      case BinaryOp::kMultiply:
        return builder_.CreateMul(a, b);
      case BinaryOp::kDivide:
      case BinaryOp::kFloorDivide:
      case BinaryOp::kFloorMod:
      case BinaryOp::kTruncMod:
        return SafeIntegerDivision(op, is_signed, a, b);
      case BinaryOp::kMinimum:
        return builder_.CreateSelect(
            is_signed ? builder_.CreateICmpSLT(a, b) : builder_.CreateICmpULT(a, b), a, b);
      case BinaryOp::kMaximum:
        return builder_.CreateSelect(
            is_signed ? builder_.CreateICmpSGT(a, b) : builder_.CreateICmpUGT(a, b), a, b);
      case BinaryOp::kPower: {
        // Computed exactly enough in double for the integer ranges involved.
        llvm::Type* double_type = builder_.getDoubleTy();
        llvm::Value* base = is_signed ? builder_.CreateSIToFP(a, double_type)
                                      : builder_.CreateUIToFP(a, double_type);
        llvm::Value* exponent = is_signed ? builder_.CreateSIToFP(b, double_type)
                                          : builder_.CreateUIToFP(b, double_type);
        llvm::Value* result = Intrinsic(llvm::Intrinsic::pow, double_type, {base, exponent});
        return LowerCast(result, DType::kFloat64, dtype);
      }
      case BinaryOp::kShiftLeft:
      case BinaryOp::kShiftRight:
        return SafeShift(op == BinaryOp::kShiftLeft, is_signed, a, b);
      case BinaryOp::kAnd:
        return builder_.CreateAnd(a, b);
      case BinaryOp::kOr:
        return builder_.CreateOr(a, b);
      case BinaryOp::kEqual:
        return builder_.CreateICmpEQ(a, b);
      case BinaryOp::kNotEqual:
        return builder_.CreateICmpNE(a, b);
      case BinaryOp::kLess:
        return is_signed ? builder_.CreateICmpSLT(a, b) : builder_.CreateICmpULT(a, b);
      case BinaryOp::kLessEqual:
        return is_signed ? builder_.CreateICmpSLE(a, b) : builder_.CreateICmpULE(a, b);
      case BinaryOp::kGreater:
        return is_signed ? builder_.CreateICmpSGT(a, b) : builder_.CreateICmpUGT(a, b);
      case BinaryOp::kGreaterEqual:
        return is_signed ? builder_.CreateICmpSGE(a, b) : builder_.CreateICmpUGE(a, b);
    }
    RELAY_UNREACHABLE("unknown binary kernel operator");
  }

  // A shift defined for every amount (LLVM's shifts by the width or more
  // are poison): an amount outside [0, width) shifts every bit out, leaving
  // 0, or the sign's bits for a right shift of a signed value.
  llvm::Value* SafeShift(bool left, bool is_signed, llvm::Value* a, llvm::Value* b) {
    llvm::Type* type = a->getType();
    const unsigned width = type->getScalarSizeInBits();
    llvm::Value* in_range = builder_.CreateICmpULT(b, llvm::ConstantInt::get(type, width));
    llvm::Value* amount = builder_.CreateSelect(in_range, b, llvm::ConstantInt::get(type, 0));
    if (left) {
      return builder_.CreateSelect(in_range, builder_.CreateShl(a, amount),
                                   llvm::ConstantInt::get(type, 0));
    }
    if (!is_signed) {
      return builder_.CreateSelect(in_range, builder_.CreateLShr(a, amount),
                                   llvm::ConstantInt::get(type, 0));
    }
    llvm::Value* sign = builder_.CreateAShr(a, llvm::ConstantInt::get(type, width - 1));
    return builder_.CreateSelect(in_range, builder_.CreateAShr(a, amount), sign);
  }

  // Integer division that never traps: x / 0 is 0 (and x % 0 is 0), and
  // INT_MIN / -1 wraps to INT_MIN. Divide and truncmod truncate (as C does);
  // floor division and floormod round toward negative infinity (as NumPy).
  llvm::Value* SafeIntegerDivision(BinaryOp op, bool is_signed, llvm::Value* a, llvm::Value* b) {
    llvm::Type* type = a->getType();
    llvm::Value* zero = llvm::ConstantInt::get(type, 0);
    llvm::Value* one = llvm::ConstantInt::get(type, 1);
    llvm::Value* divisor_is_zero = builder_.CreateICmpEQ(b, zero);
    llvm::Value* divisor = builder_.CreateSelect(divisor_is_zero, one, b);
    if (is_signed) {
      // INT_MIN / -1 overflows: divide by 1 and negate instead.
      llvm::Value* minimum =
          llvm::ConstantInt::get(type, llvm::APInt::getSignedMinValue(type->getScalarSizeInBits()));
      llvm::Value* overflow = builder_.CreateAnd(
          builder_.CreateICmpEQ(a, minimum),
          builder_.CreateICmpEQ(divisor, llvm::ConstantInt::getSigned(type, -1)));
      divisor = builder_.CreateSelect(overflow, one, divisor);
      llvm::Value* quotient = builder_.CreateSDiv(a, divisor);
      quotient = builder_.CreateSelect(overflow, builder_.CreateNeg(quotient), quotient);
      llvm::Value* remainder =
          builder_.CreateSelect(overflow, zero, builder_.CreateSRem(a, divisor));
      llvm::Value* result = op == BinaryOp::kTruncMod ? remainder : quotient;
      if (op == BinaryOp::kFloorDivide || op == BinaryOp::kFloorMod) {
        // Truncated results are adjusted when the remainder's sign differs from the divisor's.
        llvm::Value* adjust = builder_.CreateAnd(
            builder_.CreateICmpNE(remainder, zero),
            builder_.CreateICmpSLT(builder_.CreateXor(remainder, divisor), zero));
        result =
            op == BinaryOp::kFloorDivide
                ? builder_.CreateSelect(adjust, builder_.CreateSub(quotient, one), quotient)
                : builder_.CreateSelect(adjust, builder_.CreateAdd(remainder, divisor), remainder);
      }
      return builder_.CreateSelect(divisor_is_zero, zero, result);
    }
    bool remainder = op == BinaryOp::kFloorMod || op == BinaryOp::kTruncMod;
    llvm::Value* result =
        remainder ? builder_.CreateURem(a, divisor) : builder_.CreateUDiv(a, divisor);
    return builder_.CreateSelect(divisor_is_zero, zero, result);
  }

  llvm::Value* LowerCast(llvm::Value* value, DType from, DType to) {
    if (from == to) return value;
    llvm::Type* target = LanesOf(RegisterType(to), value);
    if (to == DType::kBool) {
      return IsFloat(from)
                 ? builder_.CreateFCmpUNE(value, llvm::ConstantFP::get(value->getType(), 0))
                 : builder_.CreateICmpNE(value, llvm::ConstantInt::get(value->getType(), 0));
    }
    if (IsFloat(from) && IsFloat(to)) return builder_.CreateFPCast(value, target);
    if (IsFloat(from)) {
      // Out-of-range conversions are poison in LLVM; the saturating
      // intrinsics give a defined (clamped, NaN to 0) result instead.
      return IsSignedInteger(to) ? Intrinsic2(llvm::Intrinsic::fptosi_sat, target, value)
                                 : Intrinsic2(llvm::Intrinsic::fptoui_sat, target, value);
    }
    bool from_signed = IsSignedInteger(from);
    if (IsFloat(to))
      return from_signed ? builder_.CreateSIToFP(value, target)
                         : builder_.CreateUIToFP(value, target);
    return builder_.CreateIntCast(value, target, from_signed);
  }

  llvm::Value* Intrinsic2(llvm::Intrinsic::ID id, llvm::Type* result, llvm::Value* value) {
    return builder_.CreateIntrinsic(id, {result, value->getType()}, {value});
  }

  const kir::Kernel& kernel_;
  const std::string entry_name_;
  std::unique_ptr<llvm::LLVMContext> context_;
  std::unique_ptr<llvm::Module> module_;
  llvm::IRBuilder<> builder_;
  bool inside_parallel_ = false;
  // Values of reductions computed ahead of an enclosing reduction's loops.
  std::unordered_map<const ReduceNode*, llvm::Value*> hoisted_reductions_;
  int outlined_count_ = 0;
  // Per parameter buffer: its alias scope, and the list of the others'.
  struct BufferScopes {
    llvm::MDNode* scope;
    llvm::MDNode* others;
  };
  std::unordered_map<const BufferNode*, BufferScopes> buffer_scopes_;
};

}  // namespace

BuiltModule LowerKernel(const kir::Kernel& kernel, const std::string& entry_name) {
  return Lowering(kernel, entry_name).Run();
}

namespace {

// The entry's symbol: the kernel's name (its operators), so that perf
// reports and disassembly say which kernel ran. Every kernel links into a
// dylib of its own, so two kernels of one name do not clash.
std::string EntrySymbol(const std::string& kernel_name) {
  std::string symbol = "relay.";
  for (char character : kernel_name) {
    const bool plain = (character >= 'a' && character <= 'z') ||
                       (character >= 'A' && character <= 'Z') ||
                       (character >= '0' && character <= '9') || character == '_' ||
                       character == '.' || character == '+';
    symbol += plain ? character : '_';
  }
  return symbol;
}

}  // namespace

KernelEntry CompileKernel(const kir::Kernel& kernel, LlvmJit& jit) {
  const std::string entry = EntrySymbol(kernel.name);
  jit.DefineSymbol(kParallelForSymbol, reinterpret_cast<void*>(&relay_cpu_parallel_for));
  jit.DefineSymbol(kParallelForAlternatingSymbol,
                   reinterpret_cast<void*>(&relay_cpu_parallel_for_alternating));
  // The key names this build of the lowering, so that a cached object from
  // an older relay-vm (whose lowering may differ for the same kernel text)
  // is never reused.
  static const std::string kLoweringBuild =
      std::string("kir-llvm ") + __DATE__ + " " + __TIME__ + "\n";
  std::string key = kLoweringBuild + PrintKernel(kernel);
  void* address = jit.CompileOrReuse(
      key, [&] { return LowerKernel(kernel, entry); }, entry);
  return reinterpret_cast<KernelEntry>(address);
}

}  // namespace relay::kernels::llvm_backend
