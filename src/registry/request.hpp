#pragma once
// How a source and a constant set become an NVRTC request. Shared by the registry and by
// the build-time tool that precompiles the built-ins, so that a precompiled binary comes
// from exactly the request a run-time compile would make.

#include "compiler/nvrtc_compiler.hpp"
#include "core/label.hpp"
#include "registry/source.hpp"

#include <functional>
#include <string>
#include <vector>

namespace kreg::registry {

// The arch a source compiles for: `arch`, or its "a" variant for a `kreg:arch-specific`
// source.
std::string source_arch(const Source& source, std::string arch);

// The request views `source`, the embedded headers and `storage` (which receives the
// constants header): all must outlive it.
compiler::Request make_request(const Source& source, const std::vector<core::ConstantValue>& values,
                               const std::string& arch,
                               const std::vector<std::string>& global_options,
                               std::string& storage);

// Compiles with `run`. A source that includes only kreg headers is compiled with -minimal;
// if that fails (the source uses texture objects, vector types or device-side runtime calls,
// which -minimal leaves out), it is compiled again the ordinary way, whose log is reported
// if it fails too.
compiler::Result compile_with_fallback(
    compiler::Request request,
    const std::function<compiler::Result(const compiler::Request&)>& run);

}  // namespace kreg::registry
