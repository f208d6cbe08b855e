// Must not link: a core file that declares a registry function by hand (as a public header
// would) and calls it. Every include is allowed; the call is what the link check refuses.
namespace kreg {
class Registry;
Registry& device_registry(int device);
}  // namespace kreg

namespace kreg::core {

void* layer_probe_calls_up() {
  return &device_registry(0);
}

}  // namespace kreg::core
