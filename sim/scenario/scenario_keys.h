// The keys each block of a scenario file may hold. The loader refuses any other key with these
// lists (JsonReader::reject_unknown_keys), and tests/docs/docs_test.cpp checks that the tables of
// docs/scenario-format.md name exactly these keys, so a key the loader accepts cannot go
// undocumented.
#pragma once

#include <string>
#include <vector>

namespace placesim::scenario_keys {

/// The scenario's top level. "sweep" is read by sim/sweep (`placesim sweep`); the loader only
/// lets it through.
inline const std::vector<std::string> kTopLevel = {
    "name",      "description", "model",         "cluster",     "strategy",   "strategies", "run",
    "outputs",   "published",   "perturbations", "convergence", "simulation", "sweep"};

/// `strategy`, or one entry of `strategies` ("name" and "cluster" in `strategies` only).
inline const std::vector<std::string> kStrategy = {"name",     "cluster",     "placement", "data_parallel",
                                                   "pipeline", "parallelism", "published"};

/// `data_parallel` of a strategy.
inline const std::vector<std::string> kDataParallel = {"replicas",     "mode",      "aggregation", "num_ps",
                                                       "ps_devices",   "sharding",  "algorithm",   "bucket_bytes",
                                                       "overlap",      "local_aggregation", "framework",
                                                       "transport",    "concurrent_collectives", "nccl_version"};

/// `parallelism` of a strategy (sim/scenario/parallelism_reader.cpp).
inline const std::vector<std::string> kParallelism = {
    "tensor", "pipeline", "data", "context", "expert", "devices", "device_order", "micro_batches", "schedule", "virtual_stages",
    "column_parallel", "row_parallel", "algorithm", "bucket_bytes", "sequence_parallel", "tp_comm_overlap", "scatter_gather",
    "selective_recompute", "selective_recompute_ops", "zero", "fsdp", "tied_embeddings", "stage_split",
    "framework", "transport", "concurrent_collectives", "nccl_version", "stage_replicas", "stage_ops"};

/// `run`.
inline const std::vector<std::string> kRun = {"mode",      "steps", "batch_size",           "precision",         "seed",
                                              "optimizer", "fetch", "log_device_placement", "tensorflow_version",
                                              "recompute", "memory_format", "fp32_gradients"};

/// `simulation`.
inline const std::vector<std::string> kSimulation = {"collectives", "symmetry", "tier", "gpu_spread"};

/// `outputs`.
inline const std::vector<std::string> kOutputs = {"trace", "report"};

/// `published` (top level, or in a strategy of `strategies`).
inline const std::vector<std::string> kPublished = {"step_time_seconds", "samples_per_second", "model_tflops_per_gpu",
                                                    "scaling_efficiency", "relative_to", "source", "confidence", "note"};

/// The values `published.confidence` takes.
inline const std::vector<std::string> kConfidence = {"HIGH", "MED", "LOW"};

}  // namespace placesim::scenario_keys
