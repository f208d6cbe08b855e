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
      key_text(compiler::encode_key(request)),
      pooled(pool) {}

std::optional<Found> decode_found(std::string_view payload, const BuildRequest& request,
                                  Origin origin, bool lasting) {
  std::string_view view;
  std::optional<compiler::Result> result =
      compiler::decode_result(payload, lasting ? &view : nullptr);
  if (!result || !result->ok || (lasting ? view.empty() : result->image.empty()) ||
      result->lowered_names.size() != request.request.name_expressions.size()) {
    return std::nullopt;
  }
  return Found{std::move(*result), origin, 0, std::span<const char>(view.data(), view.size())};
}

std::string encode_found(const Found& found) {
  if (found.lasting_image.empty()) return compiler::encode(found.result);
  compiler::Result copy = found.result;
  copy.image.assign(found.lasting_image.begin(), found.lasting_image.end());
  return compiler::encode(copy);
}

}  // namespace kreg::registry
