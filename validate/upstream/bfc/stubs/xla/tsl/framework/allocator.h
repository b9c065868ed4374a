// Stub for gpusim validate/upstream/bfc: see gpusim_stub.h.
#pragma once
#include "../../../gpusim_stub.h"
