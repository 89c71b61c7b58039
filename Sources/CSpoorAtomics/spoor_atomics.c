// The operations are inline in the header; this file gives the target its one translation unit.
#include "spoor_atomics.h"
