// The models in examples/ run by `relay-vm run` as a user runs them, each
// compared with the result NumPy computes in float64 (examples/make_*_data.py
// wrote the weights, the inputs and those results; the MLP is tested in
// run_command_test.cc).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "relay/devices.h"
#include "relay/npy.h"
#include "relay/tensor.h"
#include "tests/tools/relay_vm_command.h"

namespace relay {
namespace {

using testing::CommandResult;
using testing::Contains;
using testing::RunRelayVm;
using testing::ScratchDirectory;

namespace fs = std::filesystem;

const fs::path kRoot = testing::RepositoryRoot();
const fs::path kExamples = kRoot / "examples";
const fs::path kExpected = kRoot / "tests" / "fixtures" / "examples";

std::string Example(const std::string& name) {
  return (kExamples / name).string();
}

// Runs `relay-vm run EXAMPLE ARGUMENTS --output OUT.npy` and compares OUT.npy
// with tests/fixtures/examples/EXPECTED.
//
// Tolerance: relay-vm computes in float32 and the oracle in float64, rounded to
// float32 at the end. Each output is a softmax probability (0.07 to 0.3 here)
// after at most a few hundred float32 multiply-adds per value (72-term dot
// products in the conv net, 7 recurrent steps of 24-term dot products in the
// LSTM, 4 tree levels in the Tree-LSTM), each rounding by at most 2^-24
// relative; with tanh, sigmoid and exp approximated to about 1 ulp that stays
// around 1e-6 relative even when the errors do not cancel. So 1e-5 relative
// (plus 1e-7 absolute for values near zero) passes a correct float32 model and
// fails a wrong weight, gate order or step (those change probabilities in the
// second or third digit). Measured: at most 9e-8 relative.
//
// ctest runs these again with $RELAY_TEST_DEVICE=opencl:0, which becomes
// `--device opencl:0`: the same results from the tensor work on OpenCL.
void ExpectExampleMatchesNumPy(const std::string& arguments, const std::string& expected_file) {
  ScratchDirectory scratch;
  const char* device = std::getenv("RELAY_TEST_DEVICE");
  const std::string device_option =
      device != nullptr && *device != '\0' ? std::string(" --device ") + device : "";
  CommandResult result =
      RunRelayVm("run " + arguments + device_option + " --output " + scratch / "out.npy");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  Ref<Tensor> actual = ReadNpy(scratch / "out.npy", HostDevice());
  Ref<Tensor> expected = ReadNpy((kExpected / expected_file).string(), HostDevice());
  ASSERT_EQ(actual->dtype(), DType::kFloat32);
  ASSERT_EQ(actual->shape(), expected->shape());
  for (int64_t index = 0; index < expected->element_count(); ++index) {
    float want = expected->data<float>()[index];
    EXPECT_NEAR(actual->data<float>()[index], want, 1e-5 * std::abs(want) + 1e-7)
        << expected_file << " element " << index;
  }
}

TEST(ExamplesTest, MlpMatchesNumPy) {
  ExpectExampleMatchesNumPy(Example("mlp.relay") + " --params " + Example("mlp_params.npz") +
                                " --input input=" + Example("mlp_input.npy"),
                            "mlp_expected.npy");
}

TEST(ExamplesTest, ConvNetMatchesNumPy) {
  ExpectExampleMatchesNumPy(Example("convnet.relay") + " --params " +
                                Example("convnet_params.npz") +
                                " --input images=" + Example("convnet_input.npy"),
                            "convnet_expected.npy");
}

// One program, two sequence lengths: the sequence's length is a ? dimension.
TEST(ExamplesTest, LstmMatchesNumPyOnSequencesOfTwoLengths) {
  std::string program = Example("lstm.relay") + " --params " + Example("lstm_params.npz");
  Ref<Tensor> long_sequence = ReadNpy(Example("lstm_input.npy"), HostDevice());
  Ref<Tensor> short_sequence = ReadNpy(Example("lstm_input_short.npy"), HostDevice());
  ASSERT_EQ(long_sequence->shape(), (Shape{7, 8}));
  ASSERT_EQ(short_sequence->shape(), (Shape{3, 8}));
  ExpectExampleMatchesNumPy(program + " --input sequence=" + Example("lstm_input.npy"),
                            "lstm_expected.npy");
  ExpectExampleMatchesNumPy(program + " --input sequence=" + Example("lstm_input_short.npy"),
                            "lstm_short_expected.npy");
}

TEST(ExamplesTest, TreeLstmMatchesNumPyOnTwoTreeShapes) {
  std::string program = Example("tree_lstm.relay") + " --params " +
                        Example("tree_lstm_params.npz") +
                        " --input tokens=" + Example("tree_lstm_tokens.npy");
  ExpectExampleMatchesNumPy(program + " --input heads=" + Example("tree_lstm_heads.npy"),
                            "tree_lstm_expected.npy");
  ExpectExampleMatchesNumPy(
      program + " --input heads=" + (kExpected / "tree_lstm_chain_heads.npy").string(),
      "tree_lstm_chain_expected.npy");
}

// The training examples (SGD written in Relay, gradients derived by
// relay-vm), two epochs each: their mean losses are PyTorch's for the same
// training (examples/make_training_reference.py), and they fall. The test
// accuracy is a fraction.
//
// Tolerance: both train in float32 from the same weights; summation orders
// differ (fused kernels, batched sums), so the weights drift apart by a few
// float32 roundings per step, and the losses after two epochs by up to
// about 1e-5 relative (measured: 3e-6). A wrong gradient (a missing 1/batch,
// a transposed weight gradient) moves the second epoch's loss by far more.
void ExpectTrainingMatchesPyTorch(const std::string& arguments, const std::string& expected_file) {
  ScratchDirectory scratch;
  CommandResult result =
      RunRelayVm("run " + arguments + " --input epochs=2 --output " + scratch / "trained.npz");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  std::vector<NamedTensor> outputs = ReadNpz(scratch / "trained.npz", HostDevice());
  ASSERT_GE(outputs.size(), 2u);
  ASSERT_EQ(outputs[0].name, "out0");
  const Tensor& losses = *outputs[0].tensor;
  Ref<Tensor> expected = ReadNpy((kExpected / expected_file).string(), HostDevice());
  ASSERT_EQ(losses.shape(), expected->shape());
  for (int64_t epoch = 0; epoch < expected->element_count(); ++epoch) {
    const float want = expected->data<float>()[epoch];
    EXPECT_NEAR(losses.data<float>()[epoch], want, 1e-4 * std::abs(want)) << "epoch " << epoch;
  }
  EXPECT_LT(losses.data<float>()[1], losses.data<float>()[0]);
  const float accuracy = outputs[1].tensor->data<float>()[0];
  EXPECT_GE(accuracy, 0.0f);
  EXPECT_LE(accuracy, 1.0f);
}

TEST(ExamplesTest, TrainingTheMlpMatchesPyTorch) {
  ExpectTrainingMatchesPyTorch(
      Example("train_mlp.relay") + " --params " + Example("train_mlp_init.npz") +
          " --input train_images=" + Example("digits_train_images.npy") +
          " --input train_labels=" + Example("digits_train_labels.npy") +
          " --input test_images=" + Example("digits_test_images.npy") + " --input test_labels=" +
          Example("digits_test_labels.npy") + " --input batch=32 --input rate=0.1",
      "train_mlp_losses.npy");
}

TEST(ExamplesTest, TrainingTheLstmMatchesPyTorch) {
  ExpectTrainingMatchesPyTorch(
      Example("train_lstm.relay") + " --params " + Example("lstm_params.npz") +
          " --input train_steps=" + Example("sequences_train_steps.npy") +
          " --input train_lengths=" + Example("sequences_train_lengths.npy") +
          " --input train_labels=" + Example("sequences_train_labels.npy") +
          " --input test_steps=" + Example("sequences_test_steps.npy") +
          " --input test_lengths=" + Example("sequences_test_lengths.npy") +
          " --input test_labels=" + Example("sequences_test_labels.npy") + " --input rate=0.1",
      "train_lstm_losses.npy");
}

// The commands examples/README.md shows print the probabilities in Relay's
// literal syntax.
TEST(ExamplesTest, ReadmeCommandsPrintProbabilities) {
  for (const std::string& arguments :
       {Example("convnet.relay") + " --params " + Example("convnet_params.npz") +
            " --input images=" + Example("convnet_input.npy"),
        Example("lstm.relay") + " --params " + Example("lstm_params.npz") +
            " --input sequence=" + Example("lstm_input.npy"),
        Example("tree_lstm.relay") + " --params " + Example("tree_lstm_params.npz") +
            " --input tokens=" + Example("tree_lstm_tokens.npy") +
            " --input heads=" + Example("tree_lstm_heads.npy")}) {
    CommandResult result = RunRelayVm("run " + arguments);
    ASSERT_EQ(result.exit_code, 0) << arguments << "\n" << result.output;
    EXPECT_EQ(result.output.substr(0, 3), "[[0") << result.output;
    EXPECT_EQ(std::count(result.output.begin(), result.output.end(), '\n'), 1) << result.output;
  }
}

}  // namespace
}  // namespace relay
