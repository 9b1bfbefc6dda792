// The adaptive predictor's regression (analysis/adaptive.hpp): a correction of a reference's predictions by a ridge
// regression over a design matrix of knob terms, its penalty chosen by leave-one-out, with a Gaussian-process
// correction of its residuals over the knobs' value ranks; one "form" is such a fit in log space or in the
// observations' units, predicting every candidate's mean and log-space spread. Pure functions; any thread.
#pragma once

#include <Eigen/Dense>

#include <cstddef>
#include <limits>
#include <vector>

namespace jetsweep::analysis {

// A design matrix over the candidates: an intercept column, then each term standardised over the candidates (a
// constant term becomes 0).
Eigen::MatrixXd design(const std::vector<std::vector<double>>& terms);

// A ridge regression of z on x (column 0, the intercept, unpenalised), the penalty chosen from kLambdas by the mean
// leave-one-out relative error of the prediction (closed form through the hat matrix).
struct RidgeModel {
  Eigen::VectorXd beta;
  Eigen::MatrixXd a_inv;
  double sigma2 = 0;           // leave-one-out mean squared residual (in z's space)
  double lambda = 0;
  double loo_rel = std::numeric_limits<double>::infinity();  // mean leave-one-out |pred / obs - 1|
  std::vector<double> loo_pred;  // each observation's leave-one-out prediction (in the observations' units)
};

// Knob value ranks in [0, 1] per candidate (cores, CPU, GPU, EMC): the Gaussian-process correction's space.
using Ranks = std::vector<std::vector<double>>;

// One form fitted on the observed rows, predicting every candidate: the mean and the log-space spread.
struct FormFit {
  RidgeModel model;
  double loo_rel = 0;  // leave-one-out mean relative error of the ridge with its GP correction
  std::vector<double> loo_pred;  // and its predictions
  std::vector<double> mean, log_sd;
};

// Fits one form on the observations `y` of candidates `idx` (rows of `x_all`), corrected from `anchor` (the
// reference's prediction per candidate): log_form, log(y) - log(anchor); else y - anchor.
FormFit fit_form(const Eigen::MatrixXd& x_all, const Ranks& ranks, const std::vector<size_t>& idx,
                 const std::vector<double>& y, const std::vector<double>& anchor, bool log_form);

}  // namespace jetsweep::analysis
