// Must not build: core is the lowest layer and cannot see the registry's headers.
#include "registry/registry_impl.hpp"
