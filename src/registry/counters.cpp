#include "registry/counters.hpp"

namespace kreg::registry {
namespace {

double milliseconds(std::uint64_t ns) noexcept {
  return static_cast<double>(ns) / 1e6;
}

}  // namespace

Stats Counters::stats() const noexcept {
  Stats s;
  s.memory_hits = total(Counter::MemoryHits);
  s.precompiled_hits = total(Counter::PrecompiledHits);
  s.precompiled_ms = milliseconds(total(Counter::PrecompiledNs));
  s.disk_hits = total(Counter::DiskHits);
  s.disk_ms = milliseconds(total(Counter::DiskNs));
  s.compiles = total(Counter::Compiles);
  s.compile_ms = milliseconds(total(Counter::CompileNs));
  s.worker_compiles = total(Counter::WorkerCompiles);
  s.pch_creations = total(Counter::PchCreations);
  s.pch_uses = total(Counter::PchUses);
  s.failures = total(Counter::Failures);
  s.loads = total(Counter::Loads);
  s.load_ms = milliseconds(total(Counter::LoadNs));
  s.remote_hits = total(Counter::RemoteHits);
  s.remote_misses = total(Counter::RemoteMisses);
  s.remote_rejected = total(Counter::RemoteRejected);
  s.remote_errors = total(Counter::RemoteErrors);
  s.remote_ms = milliseconds(total(Counter::RemoteNs));
  return s;
}

}  // namespace kreg::registry
