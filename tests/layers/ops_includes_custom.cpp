// Must not build: ops and custom are siblings; neither may include the other.
#include "custom/state.hpp"
