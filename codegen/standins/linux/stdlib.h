/* cuda-sys-gen stand-in: cuda.h includes <stdlib.h> only for size_t. */
#pragma once
#include <stddef.h>
