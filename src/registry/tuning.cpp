// Registry::tune and Registry::tuned: candidates timed once per (candidate, GPU, bucket), the
// times kept as records of the caches.
//
// A record's key is "kreg-tune 1|<digest of the candidate's storage key>|<GPU>|<bucket>": the
// storage key holds the source, its headers, the options, the constants, the arch and NVRTC
// (storage_key.hpp), so a changed source, or a new candidate, finds no record and is timed,
// and nothing else is. The payload is one line:
//   ok <median ms> <timed launches>     or     failed <why>
// inside a cache entry (key, checksum) as binaries are, signed on the wire like them.

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
#include <cstdlib>
#include <sstream>

namespace kreg::registry {
namespace {

constexpr std::string_view kRecordPrefix = "kreg-tune 1|";

std::string encode_record(const TuningRecord& r) {
  if (!r.ok) return "failed " + r.why;
  std::ostringstream out;
  out.precision(17);
  out << "ok " << r.ms << ' ' << r.repeats;
  return out.str();
}

// A record's payload, or std::nullopt for anything that is not one (never throws).
std::optional<TuningRecord> decode_record(const std::string& payload) {
  TuningRecord r;
  if (payload.rfind("failed ", 0) == 0) {
    r.why = payload.substr(7);
    return r;
  }
  if (payload.rfind("ok ", 0) != 0) return std::nullopt;
  const char* begin = payload.data() + 3;
  const char* end = payload.data() + payload.size();
  char* after = nullptr;
  r.ms = std::strtod(begin, &after);
  if (after == begin || after >= end || *after != ' ' || !(r.ms > 0) || r.ms > 1e9) {
    return std::nullopt;
  }
  const auto [last, error] = std::from_chars(after + 1, end, r.repeats);
  if (error != std::errc() || last != end || r.repeats < 1) return std::nullopt;
  r.ok = true;
  return r;
}

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
  if (!cuda::driver_available()) return "no-gpu";
  try {
    const cuda::DeviceInfo info = cuda::device_info(options_.device);
    return info.name + "/" + std::to_string(info.multiprocessors) + "sm";
  } catch (const Error&) {
    return "no-gpu";
  }
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
    t.record_key =
        std::string(kRecordPrefix) +
        (t.persistent ? cache::key_digest(storage_key(salt, request)) : "local:" + request.key) +
        "|" + gpu + "|" + std::string(bucket);
    t.label = r.label;
    t.constants = std::move(constants);
    out.push_back(std::move(t));
  }
  return out;
}

std::optional<TuningRecord> RegistryImpl::find_record(const Tuned& t) {
  {
    std::lock_guard lock(records_mutex_);
    if (auto it = records_.find(t.record_key); it != records_.end()) return it->second;
  }
  if (!t.persistent) return std::nullopt;
  const std::optional<std::string> payload = chain_.find_record(t.record_key);
  if (!payload) return std::nullopt;
  std::optional<TuningRecord> record = decode_record(*payload);
  if (!record) {
    core::log_write(core::LogLevel::Warn,
                    "ignoring a tuning record that does not decode: '" + t.record_key + "'");
    return std::nullopt;
  }
  std::lock_guard lock(records_mutex_);
  records_.emplace(t.record_key, *record);
  return record;
}

void RegistryImpl::keep_record(const Tuned& t, const TuningRecord& record, bool lasting) {
  {
    std::lock_guard lock(records_mutex_);
    records_[t.record_key] = record;
  }
  if (t.persistent && lasting) chain_.store_record(t.record_key, encode_record(record));
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
    if (const std::optional<TuningRecord> record = find_record(entries[i])) {
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
      TuningRecord record;
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
  std::vector<TuneResult::Candidate> candidates;
  for (const Tuned& t : tuning_entries(name, space, bucket)) {
    const std::optional<TuningRecord> record = find_record(t);
    if (!record) return std::nullopt;
    TuneResult::Candidate c;
    c.constants = t.constants;
    c.ok = record->ok;
    c.ms = record->ms;
    candidates.push_back(std::move(c));
  }
  const TuneResult::Candidate* best = fastest(candidates);
  if (best == nullptr) return std::nullopt;
  return best->constants;
}

}  // namespace kreg::registry
