/* Empty: the driver itself lives in libFuzzer (-sanitize=fuzzer). SwiftPM
 * wants at least one source file in a C target. */
#include "CFuzzDriver.h"
