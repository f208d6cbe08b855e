// Must not build: the registry sees the CUDA toolkit's headers only through the cuda and
// compiler layers' own headers, never by name, even where the toolkit is on the default
// include path.
#include <cuda.h>

int kreg_layer_probe_registry_includes_toolkit() { return CUDA_VERSION; }
