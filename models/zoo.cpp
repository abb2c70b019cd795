#include "models/zoo.h"

#include <functional>
#include <stdexcept>
#include <utility>

#include "models/generators.h"
#include "models/layer_builder.h"
#include "sim/graph/gradient_sums.h"

namespace placesim {
namespace {

using Generator = std::function<OpGraph(const JsonReader&, int64_t, double)>;

const std::vector<std::pair<std::string, Generator>>& registry() {
  static const std::vector<std::pair<std::string, Generator>> generators{
      {"tf_add_variables", build_tf_add_variables},
      {"mlp", build_mlp},
      {"alexnet", build_alexnet},
      {"vgg16", build_vgg16},
      {"resnet50", [](const JsonReader& p, int64_t b, double d) { return build_resnet(50, p, b, d); }},
      {"resnet101", [](const JsonReader& p, int64_t b, double d) { return build_resnet(101, p, b, d); }},
      {"resnet152", [](const JsonReader& p, int64_t b, double d) { return build_resnet(152, p, b, d); }},
      {"inception_v3", build_inception_v3},
      {"amoebanet_d", build_amoebanet_d},
      {"gpt", build_gpt},
      // Grattafiori et al. 2024, table 3.
      {"llama3_8b", [](const JsonReader& p, int64_t b, double d) {
         return build_llama3({32, 4096, 32, 8, 14336, 128256, 8192}, p, b, d);
       }},
      {"llama3_70b", [](const JsonReader& p, int64_t b, double d) {
         return build_llama3({80, 8192, 64, 8, 28672, 128256, 8192}, p, b, d);
       }},
      {"llama3_405b", [](const JsonReader& p, int64_t b, double d) {
         return build_llama3({126, 16384, 128, 8, 53248, 128256, 8192}, p, b, d);
       }},
      // Jiang et al. 2024, table 1.
      {"mixtral_8x7b", build_mixtral},
      // Devlin et al. 2019, section 3; Hugging Face bert-large-uncased / bert-base-uncased.
      {"bert_large", [](const JsonReader& p, int64_t b, double d) { return build_bert({24, 1024, 16, 4096}, p, b, d); }},
      {"bert_base", [](const JsonReader& p, int64_t b, double d) { return build_bert({12, 768, 12, 3072}, p, b, d); }},
      // Vaswani et al. 2017, table 3.
      {"transformer_base", [](const JsonReader& p, int64_t b, double d) {
         return build_transformer({512, 8, 2048}, p, b, d);
       }},
      {"transformer_big", [](const JsonReader& p, int64_t b, double d) {
         return build_transformer({1024, 16, 4096}, p, b, d);
       }},
      {"t5_base", build_t5},
      {"gnmt", build_gnmt},
  };
  return generators;
}

std::string unknown_model_message(const std::string& name) {
  std::vector<std::string> names = zoo_model_names();
  std::string suggestion = did_you_mean(name, names);
  std::string available;
  for (size_t i = 0; i < names.size(); ++i) available += (i ? ", " : "") + names[i];
  return "unknown zoo model \"" + name + "\"" + (suggestion.empty() ? "" : " (did you mean \"" + suggestion + "\"?)") +
         "; available: " + available;
}

const Generator* find_generator(const std::string& name) {
  for (const auto& [known, generator] : registry()) {
    if (known == name) return &generator;
  }
  return nullptr;
}

OpGraph run_generator(const std::string& name, const Generator& generator, const JsonReader& parameters,
                      int64_t batch_size, double dtype_bytes) {
  if (batch_size < 1) throw std::invalid_argument("build_zoo_model: batch_size must be positive");
  if (!(dtype_bytes > 0)) throw std::invalid_argument("build_zoo_model: dtype_bytes must be positive");
  // A missing or null parameters value means "all defaults".
  static const Json kEmptyObject = Json::object();
  JsonReader checked = parameters.value().is_null() ? JsonReader(kEmptyObject, parameters.file(), parameters.path())
                                                    : parameters;
  try {
    OpGraph graph = generator(checked, batch_size, dtype_bytes);
    graph.set_name(name);
    add_gradient_sums(graph);
    return graph;
  } catch (const ShapeError& error) {
    // Shapes depend only on the parameters; the image size is the usual culprit.
    std::string message = "cannot build zoo model \"" + name + "\" with these parameters: " + error.what();
    if (checked.has("image_size")) checked.at("image_size").fail(message);
    checked.fail(message);
  }
}

}  // namespace

std::vector<std::string> zoo_model_names() {
  std::vector<std::string> names;
  for (const auto& entry : registry()) names.push_back(entry.first);
  return names;
}

OpGraph build_zoo_model(const std::string& name, const JsonReader& parameters, int64_t batch_size, double dtype_bytes) {
  const Generator* generator = find_generator(name);
  if (!generator) throw InputError(parameters.file(), "", unknown_model_message(name));
  return run_generator(name, *generator, parameters, batch_size, dtype_bytes);
}

OpGraph build_zoo_model(const JsonReader& name_at, const JsonReader& parameters, int64_t batch_size,
                        double dtype_bytes) {
  std::string name = name_at.as_string();
  const Generator* generator = find_generator(name);
  if (!generator) name_at.fail(unknown_model_message(name));
  return run_generator(name, *generator, parameters, batch_size, dtype_bytes);
}

}  // namespace placesim
