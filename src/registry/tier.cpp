#include "registry/tier.hpp"

#include "compiler/wire.hpp"
#include "registry/request.hpp"

namespace kreg::registry {

BuildRequest::BuildRequest(const Source& s, const std::vector<core::ConstantValue>& v,
                           std::string_view l, std::string binary_key, std::string target_arch,
                           const std::vector<std::string>& global_options, bool pool)
    : source(s),
      values(v),
      label(l),
      key(std::move(binary_key)),
      arch(std::move(target_arch)),
      request(make_request(s, v, arch, global_options, storage)),
      request_text(compiler::encode(request)),
      pooled(pool) {}

std::optional<Found> decode_found(const std::string& payload, const BuildRequest& request,
                                  Origin origin) {
  std::optional<compiler::Result> result = compiler::decode_result(payload);
  if (!result || !result->ok || result->image.empty() ||
      result->lowered_names.size() != request.request.name_expressions.size()) {
    return std::nullopt;
  }
  return Found{std::move(*result), origin, 0};
}

}  // namespace kreg::registry
