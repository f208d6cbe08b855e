// Registry::tune and Registry::tuned: candidates timed once per (candidate, GPU, bucket), the
// times kept as records of the caches (cache/tuning_record.hpp).
//
// A record's key holds the digest of the candidate's storage key, which holds the source, its
// headers, the options, the constants, the arch and NVRTC (storage_key.hpp): a changed source,
// or a new candidate, finds no record and is timed, and nothing else is. Records travel inside
// cache entries (key, checksum) as binaries do, signed on the wire like them.

#include "cache/entry.hpp"
#include "core/log.hpp"
#include "cuda/device.hpp"
#include "cuda/event_timer.hpp"
#include "registry/key_coverage.hpp"
#include "registry/registry_impl.hpp"
#include "registry/storage_key.hpp"

#include <kreg/error.hpp>
#include <kreg/stream.hpp>

#include <algorithm>
#include <charconv>

namespace kreg::registry {
namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The fastest candidate that is ok, the earlier one on a tie; null when none is ok.
const TuneResult::Candidate* fastest(const std::vector<TuneResult::Candidate>& candidates) {
  const TuneResult::Candidate* best = nullptr;
  for (const TuneResult::Candidate& c : candidates) {
    if (c.ok && (best == nullptr || c.ms < best->ms)) best = &c;
  }
  return best;
}

}  // namespace

std::string RegistryImpl::gpu_identity() const {
  // Asked once: each lookup of the ops would otherwise make driver calls for it.
  std::call_once(gpu_identity_once_, [this] {
    gpu_identity_ = "no-gpu";
    if (!cuda::driver_available()) return;
    try {
      const cuda::DeviceInfo info = cuda::device_info(options_.device);
      gpu_identity_ = info.name + "/" + std::to_string(info.multiprocessors) + "sm";
    } catch (const Error&) {
      // No GPU: records of a caller's timer are kept under "no-gpu".
    }
  });
  return gpu_identity_;
}

std::vector<RegistryImpl::Tuned> RegistryImpl::tuning_entries(std::string_view name,
                                                              const TuneSpace& space,
                                                              std::string_view bucket) {
  if (bucket.empty()) {
    throw Error(ErrorCode::InvalidArgument, "tune: the shape bucket must not be empty");
  }
  const std::string salt = storage_salt();
  const std::string gpu = gpu_identity();
  std::vector<Tuned> out;
  for (Constants& constants : space.candidates()) {
    const Resolved r = resolve(name, constants);
    const BuildRequest request = build_request(r, false);
    Tuned t;
    t.persistent = key_can_cover(*r.source, request.request);
    // A candidate whose compile may read files its key cannot hold is timed per process.
    t.record_key = cache::tuning_key(
        t.persistent ? cache::key_digest(storage_key(salt, request)) : "local:" + request.key, gpu,
        bucket);
    t.label = r.label;
    t.constants = std::move(constants);
    out.push_back(std::move(t));
  }
  return out;
}

std::optional<cache::TuningRecord> RegistryImpl::find_record(const Tuned& t) {
  {
    std::lock_guard lock(records_mutex_);
    if (auto it = records_.find(t.record_key); it != records_.end()) return it->second;
  }
  if (!t.persistent) return std::nullopt;
  const std::optional<std::string> payload = chain_.find_record(t.record_key);
  if (!payload) return std::nullopt;
  std::optional<cache::TuningRecord> record = cache::decode_tuning(*payload);
  // A record under this key names this candidate; another label is not its record.
  if (!record || record->label != t.label) {
    core::log_write(core::LogLevel::Warn,
                    "ignoring a tuning record that does not decode or names another candidate: '" +
                        t.record_key + "'");
    return std::nullopt;
  }
  std::lock_guard lock(records_mutex_);
  records_.emplace(t.record_key, *record);
  return record;
}

void RegistryImpl::keep_record(const Tuned& t, const cache::TuningRecord& record, bool lasting) {
  {
    std::lock_guard lock(records_mutex_);
    records_[t.record_key] = record;
  }
  if (t.persistent && lasting) chain_.store_record(t.record_key, cache::encode_tuning(record));
}

TuneResult RegistryImpl::tune(std::string_view name, const TuneSpace& space,
                              std::string_view bucket, const TuneRun& run,
                              const TuneOptions& options) {
  if (options.warmup < 0 || options.repeats < 1) {
    throw Error(ErrorCode::InvalidArgument, "tune: warmup must be >= 0 and repeats >= 1");
  }
  if (!run && !options.timer) {
    throw Error(ErrorCode::InvalidArgument, "tune: a run function is needed to time on the GPU");
  }
  const std::vector<Tuned> entries = tuning_entries(name, space, bucket);
  TuneResult result;
  std::vector<std::size_t> missing;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    TuneResult::Candidate c;
    c.constants = entries[i].constants;
    c.label = entries[i].label;
    if (const std::optional<cache::TuningRecord> record = find_record(entries[i])) {
      c.ok = record->ok;
      c.ms = record->ms;
      c.why = record->why;
    } else {
      missing.push_back(i);
    }
    result.candidates.push_back(std::move(c));
  }

  if (!missing.empty()) {
    const bool gpu_timer = !options.timer;
    std::optional<Stream> stream;
    if (gpu_timer) {
      start_device();  // NoDevice without a GPU, before any compile
      stream = current_stream();
    }
    // The candidates compile in parallel first (and load, with a GPU), then run one by one.
    std::vector<KernelRequest> requests;
    requests.reserve(missing.size());
    for (const std::size_t i : missing)
      requests.push_back({std::string(name), entries[i].constants});
    prewarm(requests, {});
    for (const std::size_t i : missing) {
      const Tuned& t = entries[i];
      TuneResult::Candidate& c = result.candidates[i];
      cache::TuningRecord record;
      record.label = t.label;
      bool lasting = true;  // a compile failure or a refused check: the same next time
      try {
        compile(name, t.constants);
        // Resolved once: a launch between two timing events must cost no lookup.
        const Kernel* kernel = gpu_timer ? &get_slow(name, t.constants) : nullptr;
        const std::function<void()> launch = [&] {
          run(kernel != nullptr ? *kernel : get_slow(name, t.constants));
        };
        if (gpu_timer) {
          for (int w = 0; w < options.warmup; ++w) launch();
          stream->synchronize();
        }
        if (options.check && !options.check(t.constants)) {
          record.why = "its outputs failed the check";
        } else if (gpu_timer) {
          record.ms = median(cuda::time_launches(stream->device(), stream->native().native, launch,
                                                 options.repeats));
          record.repeats = options.repeats;
          record.ok = true;
        } else {
          record.ms = options.timer(t.constants, launch);
          record.repeats = 1;
          record.ok = record.ms > 0;
          if (!record.ok) record.why = "the timer gave no positive time";
        }
      } catch (const Error& e) {
        record.why = std::string(e.message());
        lasting = e.code() == ErrorCode::CompileError;
      }
      c.ok = record.ok;
      c.ms = record.ms;
      c.why = record.why;
      c.timed = true;
      ++result.timed;
      keep_record(t, record, lasting);
    }
  }

  if (result.timed > 0) forget_winners();
  const TuneResult::Candidate* best = fastest(result.candidates);
  if (best == nullptr) {
    std::string why;
    for (const TuneResult::Candidate& c : result.candidates) {
      why += "\n  " + c.label + ": " + c.why;
    }
    throw Error(ErrorCode::CompileError, "tune: no candidate of '" + std::string(name) + "' for '" +
                                             std::string(bucket) +
                                             "' compiled, ran and passed:" + why);
  }
  result.winner = best->constants;
  result.ms = best->ms;
  return result;
}

std::optional<Constants> RegistryImpl::tuned(std::string_view name, const TuneSpace& space,
                                             std::string_view bucket) {
  // The space as text: its lists and fixed values, and with a rule (which cannot be
  // compared) the candidates it lets through.
  std::string memo;
  memo.reserve(160);
  memo.append(name).append("\n").append(bucket).append("\n");
  const auto number = [&memo](std::int64_t v, char end) {
    char digits[24];
    const auto [last, error] = std::to_chars(digits, digits + sizeof digits, v);
    memo.append(digits, last).push_back(end);
  };
  const auto add = [&](const Constants& c) {
    for (const auto& [index, value] : c.ints) {
      number(index, '=');
      number(value, ',');
    }
    for (const auto& [index, value] : c.bools) {
      number(index, value ? 'T' : 'F');
    }
    memo.push_back(';');
  };
  add(space.fixed);
  for (const auto& [index, values] : space.ints) {
    number(index, ':');
    for (const std::int32_t v : values) number(v, ',');
  }
  for (const int index : space.bools) number(index, 'b');
  if (space.accept) {
    for (const Constants& c : space.candidates()) add(c);
  }
  {
    std::lock_guard lock(records_mutex_);
    if (auto it = winners_.find(memo); it != winners_.end()) return it->second;
  }
  std::optional<Constants> winner;
  std::vector<TuneResult::Candidate> timed;
  for (const Tuned& t : tuning_entries(name, space, bucket)) {
    const std::optional<cache::TuningRecord> record = find_record(t);
    if (!record) {
      timed.clear();
      break;
    }
    TuneResult::Candidate c;
    c.constants = t.constants;
    c.ok = record->ok;
    c.ms = record->ms;
    timed.push_back(std::move(c));
  }
  if (const TuneResult::Candidate* best = fastest(timed)) winner = best->constants;
  std::lock_guard lock(records_mutex_);
  if (!space.accept && !asked_.contains(memo)) {
    asked_.emplace(memo, TunedLookup{std::string(name), std::string(bucket), space});
  }
  winners_.emplace(std::move(memo), winner);
  return winner;
}

void RegistryImpl::warm_lookups(const std::vector<TunedLookup>& lookups) {
  for (const TunedLookup& l : lookups) {
    try {
      tuned(l.name, l.space, l.bucket);
    } catch (const Error& e) {
      core::log_write(core::LogLevel::Debug, "manifest: tuned lookup of '" + l.name + "' for '" +
                                                 l.bucket +
                                                 "' skipped: " + std::string(e.message()));
    }
  }
}

void RegistryImpl::forget_winners() {
  std::lock_guard lock(records_mutex_);
  winners_.clear();
}

}  // namespace kreg::registry
