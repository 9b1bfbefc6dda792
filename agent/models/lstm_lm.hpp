// Word-level LSTM language model for next-word prediction (PowerTrain's LSTM workload on WikiText):
// embedding (E = 256) -> dropout -> 2-layer LSTM (H = 256, dropout 0.2 between layers) -> dropout ->
// decoder tied to the embedding weights (plus a bias). Parameters = 257 V + 1,052,672 for a vocabulary of
// V words (8.6M, PowerTrain Table 3, for V ~ 29.4k; 9.61M for WikiText-2's full 33,278-word vocabulary).
// Input: token ids [batch, seq]; output: logits [batch, seq, V]. Owned by the training thread.
#pragma once

#include <torch/torch.h>

namespace jetsweep::agent::models {

class LstmLmImpl : public torch::nn::Module {
 public:
  static constexpr int64_t kEmbedding = 256;
  static constexpr int64_t kHidden = 256;
  static constexpr int64_t kLayers = 2;

  explicit LstmLmImpl(int64_t vocabulary);
  torch::Tensor forward(torch::Tensor tokens);

 private:
  torch::nn::Embedding embedding_{nullptr};
  torch::nn::LSTM lstm_{nullptr};
  torch::nn::Dropout dropout_{nullptr};
  torch::Tensor decoder_bias_;
};
TORCH_MODULE(LstmLm);

}  // namespace jetsweep::agent::models
