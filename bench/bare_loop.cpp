// bench_bare_loop: the baseline for `jetsweep-agent run` - the plainest LibTorch training loop over the
// same data, model and hyper-parameters: the whole training set normalised into one tensor up front,
// a shuffled index per epoch, index_select per minibatch, forward/backward/step. No loader threads, no
// per-minibatch timing, no telemetry. Prints one JSON line per epoch like the agent's output.
#include <torch/torch.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <iostream>
#include <string>

#include "agent/datasets/image_dataset.hpp"
#include "agent/models/lenet.hpp"

int main(int argc, char** argv) {
  CLI::App app("The plainest LibTorch training loop (LeNet-5, Fashion-MNIST): the baseline of `jetsweep-agent run`.",
               "bench_bare_loop");
  std::string data_dir;
  int64_t batch_size = 0, epochs = 0, seed = 0;
  int threads = 0;
  app.add_option("DATA_DIR", data_dir, "the Fashion-MNIST IDX files")->required();
  app.add_option("BATCH_SIZE", batch_size)->required()->check(CLI::Range(1, 1000000));
  app.add_option("EPOCHS", epochs)->required()->check(CLI::Range(1, 1000000));
  app.add_option("THREADS", threads, "torch intra-op threads")->required()->check(CLI::Range(1, 1024));
  app.add_option("SEED", seed)->required();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;   // --help: 0; a usage error (printed with the reason): 2
  }
  auto data = jetsweep::agent::load_training_set("fashion-mnist", data_dir);
  if (!data) {
    std::cerr << data.status().to_string() << "\n";
    return 1;
  }
  torch::manual_seed(static_cast<uint64_t>(seed));
  torch::set_num_threads(threads);
  auto images = torch::from_blob(data->pixels.data(), {data->count, 1, data->rows, data->cols}, torch::kUInt8)
                    .to(torch::kFloat32)
                    .div_(255.0)
                    .sub_(data->mean)
                    .div_(data->std);
  auto labels = torch::from_blob(data->labels.data(), {data->count}, torch::kUInt8).to(torch::kInt64);
  jetsweep::agent::models::LeNet5 model(1, data->rows, 10);
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.01).momentum(0.9));
  for (int64_t epoch = 0; epoch < epochs; ++epoch) {
    const auto t0 = std::chrono::steady_clock::now();
    auto order = torch::randperm(data->count, torch::kInt64);
    int64_t minibatches = 0;
    for (int64_t first = 0; first < data->count; first += batch_size) {
      auto idx = order.slice(0, first, std::min(first + batch_size, data->count));
      auto x = images.index_select(0, idx);
      auto y = labels.index_select(0, idx);
      optimizer.zero_grad();
      auto loss = torch::nn::functional::cross_entropy(model->forward(x), y);
      loss.backward();
      optimizer.step();
      ++minibatches;
    }
    const double e2e = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::cout << "{\"type\":\"epoch\",\"epoch\":" << epoch << ",\"e2e_s\":" << e2e << ",\"minibatches\":" << minibatches
              << "}" << std::endl;
  }
  return 0;
}
