// The neutral graph an external codegen receives: its validation (what a
// .rbc file's reader relies on) and its run-time shapes.
#include "kernels/external/external_graph.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "relay/error.h"

namespace relay::kernels::external {
namespace {

// dense(x, w) then add(·, b): x [?, 8], w [4, 8], b [4].
ExternalGraph DenseAdd() {
  ExternalGraph graph;
  graph.params = {ValueType::Tensor({kAnyDim, 8}, DType::kFloat32),
                  ValueType::Tensor({4, 8}, DType::kFloat32),
                  ValueType::Tensor({4}, DType::kFloat32)};
  graph.operators = {{"nn.dense", {}, {0, 1}}, {"add", {}, {-1, 2}}};
  graph.composites = {0, 0};
  graph.composite_names = {"test.dense_add"};
  graph.types = {ValueType::Tensor({kAnyDim, 4}, DType::kFloat32),
                 ValueType::Tensor({kAnyDim, 4}, DType::kFloat32)};
  return graph;
}

std::string ValidationError(ExternalGraph graph) {
  try {
    ValidateGraph(graph, ErrorKind::kLoad, "kernel 3");
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kLoad);
    return error.message();
  }
  return "";
}

TEST(ExternalGraphTest, AValidGraphNormalisesItsAttributes) {
  ExternalGraph graph = DenseAdd();
  ValidateGraph(graph, ErrorKind::kLoad, "kernel 3");
  // nn.dense's schema fills in its defaults (units, out_dtype).
  EXPECT_FALSE(graph.operators[0].attrs.empty());
  EXPECT_EQ(graph.CompositeOf(1), "test.dense_add");
  EXPECT_EQ(graph.result(), ValueType::Tensor({kAnyDim, 4}, DType::kFloat32));
}

TEST(ExternalGraphTest, InvalidGraphsAreRejectedWithTheProblem) {
  ExternalGraph graph = DenseAdd();
  graph.operators[1].inputs = {-2, 2};
  EXPECT_NE(ValidationError(graph).find("kernel 3: operator 1 (add)'s input -2 is not a known"),
            std::string::npos)
      << ValidationError(graph);
  graph = DenseAdd();
  graph.operators[0].op = "nn.dens";
  EXPECT_NE(ValidationError(graph).find("is not an operator"), std::string::npos);
  graph = DenseAdd();
  graph.operators[0].inputs = {0};
  EXPECT_NE(ValidationError(graph).find("takes 2 inputs"), std::string::npos);
  graph = DenseAdd();
  graph.types[1] = ValueType::Tensor({kAnyDim, 5}, DType::kFloat32);
  EXPECT_NE(ValidationError(graph).find("is recorded as Tensor[(?, 5), float32]"),
            std::string::npos)
      << ValidationError(graph);
  graph = DenseAdd();
  graph.params[2] = ValueType::Tensor({3}, DType::kFloat32);  // add cannot broadcast 4 and 3
  EXPECT_NE(ValidationError(graph).find("operator 1 (add)"), std::string::npos);
  graph = DenseAdd();
  graph.composites = {0};
  EXPECT_NE(ValidationError(graph).find("do not match the operators"), std::string::npos);
  graph = DenseAdd();
  graph.composites[0] = 1;
  EXPECT_NE(ValidationError(graph).find("names composite 1, which is not listed"),
            std::string::npos);
  graph = DenseAdd();
  graph.operators[0].attrs = {{"units", AttrValue::String("four")}};
  EXPECT_NE(ValidationError(graph).find("units"), std::string::npos) << ValidationError(graph);
  graph = DenseAdd();
  graph.operators.clear();
  graph.composites.clear();
  graph.types.clear();
  EXPECT_NE(ValidationError(graph).find("at least one operator"), std::string::npos);
}

TEST(ExternalGraphTest, ShapesAreInferredForTheGivenExtents) {
  ExternalGraph graph = DenseAdd();
  ValidateGraph(graph, ErrorKind::kLoad, "kernel 3");
  const std::vector<Shape> inputs = {{5, 8}, {4, 8}, {4}};
  EXPECT_EQ(InferShapes(graph, inputs), (std::vector<Shape>{{5, 4}, {5, 4}}));
  // A fixed dimension given another extent, and a wrong count, are usage
  // errors (the run-time shape check).
  const std::vector<Shape> wrong = {{5, 7}, {4, 8}, {4}};
  EXPECT_THROW(InferShapes(graph, wrong), Error);
  const std::vector<Shape> short_list = {{5, 8}};
  EXPECT_THROW(InferShapes(graph, short_list), Error);
}

}  // namespace
}  // namespace relay::kernels::external
