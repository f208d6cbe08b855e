// Must not build: <kreg/registry.hpp> belongs to the registry layer, above core.
#include <kreg/registry.hpp>
