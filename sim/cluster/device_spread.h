// How much the GPUs of one model differ in speed (a measured spread of their GEMM times), and
// what it costs a synchronous job: its GEMMs run at the pace of its slowest GPU (docs/cost-model.md,
// "The slowest GPU sets a synchronous step's pace").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace placesim {

/// Each GPU of a model runs its GEMMs at its own pace (its clock under the power cap): a
/// log-normal spread of per-GPU GEMM times around the fleet's, measured on a fleet.
struct GemmTimeSpread {
  double log_sigma = 0;  ///< standard deviation of log(a GPU's GEMM time / the fleet median)
  std::string source;    ///< the measured table and the fit
};

/// E[max of `devices` independent log-normal times] / E[one such time], for a log-normal whose
/// log has standard deviation `log_sigma`: 1 for one device (or sigma 0), 2 Phi(sigma / sqrt 2)
/// for two, rising about as exp(sigma x E[max of N standard normals]) with N.
double expected_slowest_of(double log_sigma, int64_t devices);

/// The log-normal's sigma fitted to measured per-GPU times (each GPU's median over its runs):
/// (ln q90 - ln q10) / (2 x 1.2816), the interdecile range of the logs over the normal's, so a
/// few outlying GPUs (which an operator would take out of service) do not set it. Needs at least
/// ten positive times.
double fit_gemm_time_log_sigma(std::vector<double> per_gpu_seconds);

}  // namespace placesim
