#pragma once
// Quoting one error's message inside other text.

#include <kreg/error.hpp>

#include <exception>
#include <string>

namespace kreg::core {

// What `e` says, without kreg's prefix when it is a kreg::Error: the text that quotes it
// (a prewarm failure, a compile log, another error) names kreg already or is shown by kreg.
inline std::string message_of(const std::exception& e) {
  if (const auto* error = dynamic_cast<const Error*>(&e)) return std::string(error->message());
  return e.what();
}

}  // namespace kreg::core
