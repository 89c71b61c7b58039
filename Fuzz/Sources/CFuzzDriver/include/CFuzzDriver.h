/* libFuzzer's entry point for programs that have their own `main` (or, without libFuzzer, the plain
 * driver in CFuzzDriver.c).
 * SwiftPM links executables with a `main` of its own, so a target that only
 * defines `LLVMFuzzerTestOneInput` would build and run nothing; instead each
 * fuzz target's main.swift hands its callback to this driver. */
#ifndef CFUZZDRIVER_H
#define CFUZZDRIVER_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv,
                        int (*UserCb)(const uint8_t *Data, size_t Size));

#endif
