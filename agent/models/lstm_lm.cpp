#include "agent/models/lstm_lm.hpp"

namespace jetsweep::agent::models {

LstmLmImpl::LstmLmImpl(int64_t vocabulary) {
  embedding_ = register_module("embedding", torch::nn::Embedding(vocabulary, kEmbedding));
  lstm_ = register_module(
      "lstm", torch::nn::LSTM(torch::nn::LSTMOptions(kEmbedding, kHidden).num_layers(kLayers).dropout(0.2).batch_first(true)));
  dropout_ = register_module("dropout", torch::nn::Dropout(0.2));
  decoder_bias_ = register_parameter("decoder_bias", torch::zeros({vocabulary}));
  torch::NoGradGuard no_grad;
  embedding_->weight.uniform_(-0.1, 0.1);
}

torch::Tensor LstmLmImpl::forward(torch::Tensor tokens) {
  auto x = dropout_->forward(embedding_->forward(tokens));
  auto out = std::get<0>(lstm_->forward(x));
  // Decoder weights tied to the embedding (Press & Wolf 2017), as word-level LSTM LMs usually do.
  return torch::linear(dropout_->forward(out), embedding_->weight, decoder_bias_);
}

}  // namespace jetsweep::agent::models
