// bench_loader_throughput: images/s of the data pipeline alone (fetch + decode + transforms, no training)
// for loader workers w = 0, 1, 2, 4, on a dataset in its real format. Baseline: w = 0 in the same run.
// Usage: bench_loader_throughput DATASET DATA_DIR [BATCH_SIZE=16] [ROUNDS=3]   (e.g. gld23k DIR from make-data)
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <iostream>
#include <vector>

#include "agent/datasets/dataset.hpp"
#include "agent/loader.hpp"

using namespace jetsweep::agent;

int main(int argc, char** argv) {
  CLI::App app("Images/s of the data pipeline alone for loader workers 0, 1, 2, 4.", "bench_loader_throughput");
  std::string dataset, data_dir;
  int64_t batch = 16;
  int rounds = 3;
  app.add_option("DATASET", dataset, "e.g. gld23k")->required();
  app.add_option("DATA_DIR", data_dir, "the dataset in its real format (jetsweep-agent make-data)")->required();
  app.add_option("BATCH_SIZE", batch)->capture_default_str()->check(CLI::Range(1, 1000000));
  app.add_option("ROUNDS", rounds)->capture_default_str()->check(CLI::Range(1, 1000));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;   // --help: 0; a usage error (printed with the reason): 2
  }
  auto data = open_training_set(dataset, data_dir);
  if (!data) {
    std::cerr << data.status().to_string() << "\n";
    return 1;
  }
  DatasetBatchBuilder builder(**data, 1);
  const std::vector<int64_t> workers = {0, 1, 2, 4};
  std::vector<std::vector<double>> rates(workers.size());
  for (int r = 0; r < rounds; ++r) {
    for (size_t i = 0; i < workers.size(); ++i) {
      Loader loader(builder, batch, workers[i], 2, 1);
      loader.start_epoch(r);
      const auto t0 = std::chrono::steady_clock::now();
      Batch b;
      double stall = 0;
      int64_t images = 0;
      while (loader.next(b, stall)) {
        if (!b.status.is_ok()) {
          std::cerr << b.status.to_string() << "\n";
          return 1;
        }
        images += b.size;
      }
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      rates[i].push_back(static_cast<double>(images) / s);
    }
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  const double base = median(rates[0]);
  for (size_t i = 0; i < workers.size(); ++i)
    std::cout << "| " << dataset << " loader, batch " << batch << ", w = " << workers[i] << " (" << (*data)->size()
              << " images, " << rounds << " rounds), images/s | " << base << " | " << median(rates[i]) << " | "
              << median(rates[i]) / base << " |\n";
  return 0;
}
