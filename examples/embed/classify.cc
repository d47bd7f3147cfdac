// Runs an image classifier (examples/mlp.relay) through relay-vm's C++ API:
// prints @main's parameters, then classifies batches of 1 and 3 made-up
// images from VMs on two threads sharing one executable.
//
//   classify_cpp MODEL [PARAMS.npz]
#include <relay/devices.h>
#include <relay/runtime.h>

#include <iostream>
#include <thread>
#include <vector>

namespace {

// Image `index` of a made-up set: a bright vertical bar at column index % 8.
relay::Ref<relay::Tensor> Images(int64_t count) {
  relay::Ref<relay::Tensor> images =
      relay::Tensor::Empty(relay::HostDevice(), {count, 64}, relay::DType::kFloat32);
  for (int64_t image = 0; image < count; ++image) {
    for (int pixel = 0; pixel < 64; ++pixel)
      images->data<float>()[image * 64 + pixel] = pixel % 8 == image % 8 ? 16.0f : 0.0f;
  }
  return images;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: classify_cpp MODEL [PARAMS.npz]\n";
    return 2;
  }
  try {
    relay::LoadOptions options;
    if (argc > 2) options.params_path = argv[2];
    const relay::Executable model = relay::Executable::Load(argv[1], options);
    for (const relay::ParameterInfo& parameter : model.function("main").parameters)
      std::cout << "@main parameter %" << parameter.name << ": " << parameter.type << "\n";

    std::vector<std::string> lines(2);
    std::vector<std::thread> threads;
    for (int thread = 0; thread < 2; ++thread) {
      threads.emplace_back([&, thread] {
        relay::VirtualMachine vm(model);  // one VM per thread, one shared executable
        const int64_t count = thread == 0 ? 1 : 3;
        vm.SetInput("input", Images(count));
        const relay::Value result = vm.Invoke();
        const auto& probabilities = static_cast<const relay::Tensor&>(*result);
        std::string line = "batch of " + std::to_string(count) + ":";
        for (int64_t image = 0; image < count; ++image) {
          int best = 0;
          for (int label = 1; label < 10; ++label) {
            if (probabilities.data<float>()[image * 10 + label] >
                probabilities.data<float>()[image * 10 + best])
              best = label;
          }
          line += " " + std::to_string(best);
        }
        lines[size_t(thread)] = line;
      });
    }
    for (std::thread& thread : threads) thread.join();
    for (const std::string& line : lines) std::cout << line << "\n";
  } catch (const relay::Error& error) {
    std::cerr << "classify_cpp: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
