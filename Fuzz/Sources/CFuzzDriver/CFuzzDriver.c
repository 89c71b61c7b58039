/* The entry point each fuzz target's main.swift calls. With libFuzzer linked (scripts/fuzz builds with
 * -sanitize=fuzzer and defines SPOOR_LIBFUZZER), libFuzzer's own LLVMFuzzerRunDriver is the only one and
 * this file is empty. Without it (a plain `swift build`, which `make test` runs so that the harnesses keep
 * compiling), each target is an ordinary program that runs its callback once on each file named on its
 * command line, as libFuzzer's standalone driver does: `FuzzEventDecoder Corpus/FuzzEventDecoder/seed-*`. */
#include "CFuzzDriver.h"

#ifndef SPOOR_LIBFUZZER
#include <stdio.h>
#include <stdlib.h>

/* libFuzzer's default -max_len is 4096; the committed inputs are far below this bound. */
enum { MAX_INPUT = 1 << 24 };

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*UserCb)(const uint8_t *Data, size_t Size)) {
    uint8_t *data = malloc(MAX_INPUT);
    if (data == NULL) return 1;
    for (int i = 1; i < *argc; i++) {
        const char *path = (*argv)[i];
        FILE *file = fopen(path, "rb");
        if (file == NULL) {
            fprintf(stderr, "cannot open %s\n", path);
            free(data);
            return 1;
        }
        size_t size = fread(data, 1, MAX_INPUT, file);
        int longer = fgetc(file) != EOF;
        fclose(file);
        if (longer) {
            fprintf(stderr, "%s is longer than %d bytes\n", path, MAX_INPUT);
            free(data);
            return 1;
        }
        UserCb(data, size);
    }
    free(data);
    return 0;
}
#endif
