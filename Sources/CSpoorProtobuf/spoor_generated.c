/* The code protoc-c generates from proto/ (scripts/generate-proto writes generated/, which Package.swift
 * excludes), compiled through this file so that the whole target compiles to nothing where protobuf-c's
 * headers are absent. That is every Apple platform: there SpoorWire encodes and decodes in Swift and nothing
 * depends on this target (the SystemLibraries trait's platform condition in Package.swift); the guard only
 * lets `swift build` of the whole package, which compiles every target, succeed there. */
#if __has_include(<protobuf-c/protobuf-c.h>)
#include "spoor/v1/event.pb-c.c"
#endif
