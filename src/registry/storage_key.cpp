#include "registry/storage_key.hpp"

#include "compiler/nvrtc_compiler.hpp"

namespace kreg::registry {

std::string storage_salt() {
  // The toolkit's folder too: a source that fails with -minimal is compiled again with it on
  // the include path, which its first request (the key) does not show.
  return "kreg disk key 4; " + compiler::identity() + "; " + compiler::toolkit_include_dir() + "\n";
}

}  // namespace kreg::registry
