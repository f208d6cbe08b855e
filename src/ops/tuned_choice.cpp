// The built-in ops' tunable choices (tuned_choice.hpp) and ops::tune.

#include "ops/tuned_choice.hpp"

#include "core/label.hpp"

#include <kreg/error.hpp>
#include <kreg/ops.hpp>
#include <kreg/stream.hpp>

#include <algorithm>

namespace kreg::ops {
namespace {

std::string builtin(const Choice& choice) {
  return std::string(kBuiltinPrefix) + choice.kernel;
}

// What makes two choices the same one: the kernel with its fixed constants, and the bucket.
std::string identity(const Choice& choice) {
  return core::format_label(choice.kernel, core::sorted_constants(choice.fixed)) + "#" +
         choice.bucket;
}

TuneSpace space_of(const Choice& choice) {
  TuneSpace space;
  space.fixed = choice.fixed;
  for (const Choice::Knob& k : choice.knobs) space.ints.emplace_back(k.index, k.values);
  return space;
}

// `fixed` and the knobs' values from `values` (a candidate, or a winner), less those equal
// to the kernel's own defaults.
Constants launch_constants(const Choice& choice, const Constants& values) {
  Constants out = choice.fixed;
  for (const Choice::Knob& k : choice.knobs) {
    const std::int32_t v = int_constant(values, k.index, k.values.front());
    if (v != k.kernel_default) out.ints.emplace_back(k.index, v);
  }
  return out;
}

// ops::tune's state on its thread: the choices the probing call made, or the one choice it
// is timing and the candidate to force on it.
struct TuningScope {
  bool probing = true;
  std::vector<Choice> seen;
  std::string forced_identity;
  Constants forced;
};

thread_local TuningScope* tuning_scope = nullptr;

class ScopeGuard {
 public:
  explicit ScopeGuard(TuningScope& scope) : previous_(tuning_scope) { tuning_scope = &scope; }
  ~ScopeGuard() { tuning_scope = previous_; }
  ScopeGuard(const ScopeGuard&) = delete;
  ScopeGuard& operator=(const ScopeGuard&) = delete;

 private:
  TuningScope* previous_;
};

}  // namespace

Choice::Knob knob(int index, std::int32_t kernel_default, std::int32_t rule,
                  std::initializer_list<std::int32_t> others) {
  Choice::Knob k{index, kernel_default, {rule}};
  for (const std::int32_t v : others) {
    if (std::find(k.values.begin(), k.values.end(), v) == k.values.end()) k.values.push_back(v);
  }
  return k;
}

std::int32_t int_constant(const Constants& constants, int index, std::int32_t fallback) {
  for (const auto& [i, v] : constants.ints) {
    if (i == index) return v;
  }
  return fallback;
}

std::int64_t bucket_size(std::int64_t n) {
  std::int64_t p = 1;
  while (p < n) p *= 2;
  return p;
}

Constants choose(Registry& registry, const Choice& choice) {
  if (TuningScope* scope = tuning_scope) {
    if (scope->probing) {
      const std::string id = identity(choice);
      const bool known = std::any_of(scope->seen.begin(), scope->seen.end(),
                                     [&](const Choice& c) { return identity(c) == id; });
      if (!known) scope->seen.push_back(choice);
    } else if (identity(choice) == scope->forced_identity) {
      return launch_constants(choice, scope->forced);
    }
  }
  std::optional<Constants> winner;
  try {
    winner = registry.tuned(builtin(choice), space_of(choice), choice.bucket);
  } catch (const Error&) {
    // No GPU and no arch to key records by (an op's graph built on a machine without one):
    // the rule's values.
  }
  return launch_constants(choice, winner.value_or(Constants{}));
}

std::vector<OpTuning> tune(const std::function<void()>& call, const TuneOptions& options) {
  if (!call) throw Error(ErrorCode::InvalidArgument, "ops::tune: no call was given");
  const Stream stream = current_stream();  // refuses under a CPU scope
  Registry& registry = device_registry(stream.device());
  TuningScope scope;
  {
    const ScopeGuard guard(scope);
    call();
  }
  stream.synchronize();
  if (scope.seen.empty()) {
    throw Error(ErrorCode::InvalidArgument,
                "ops::tune: the call made no tunable choice (it must evaluate what it computes; "
                "matmul, quantized_matmul's decode and the MoE products have choices)");
  }
  std::vector<OpTuning> out;
  const std::vector<Choice> choices = std::move(scope.seen);
  scope.probing = false;
  for (const Choice& choice : choices) {
    scope.forced_identity = identity(choice);
    const TuneRun run = [&](const Kernel& kernel) {
      const std::string_view label = kernel.label();
      const std::size_t bar = label.find('|');
      scope.forced =
          bar == std::string_view::npos ? Constants{} : parse_constants(label.substr(bar + 1));
      const ScopeGuard guard(scope);
      call();
    };
    OpTuning t;
    t.kernel = choice.kernel;
    t.bucket = choice.bucket;
    t.result = registry.tune(builtin(choice), space_of(choice), choice.bucket, run, options);
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace kreg::ops
